import torch
import torch.nn.functional as F

from model import Classifier

CONFIG = {
    "in_dim": 10,
    "width": 16,
    "depth": 2,
    "num_classes": 3,
    "grad_checkpointing": True,
    "lr": 0.1,
    "steps": 3,
}


def main(cfg):
    torch.manual_seed(0)
    model = Classifier(cfg)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"])
    x, y = torch.randn(8, cfg["in_dim"]), torch.randint(0, cfg["num_classes"], (8,))
    stem_before = model.stem.weight.detach().clone()
    for step in range(cfg["steps"]):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        print(step, loss.item())
    moved = not torch.equal(model.stem.weight, stem_before)
    print("MATCH" if moved else "MISMATCH: the stem's weights never received a gradient")


if __name__ == "__main__":
    main(CONFIG)
