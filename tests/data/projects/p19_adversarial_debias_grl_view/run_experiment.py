import torch
import torch.nn.functional as F

from debias.model import FairClassifier

SETTINGS = {"in_dim": 10, "dim": 16, "n_out": 2, "n_groups": 2, "lr": 1e-3, "epochs": 2}


def main(settings):
    torch.manual_seed(0)
    model = FairClassifier(settings["in_dim"], settings["dim"], settings["n_out"], settings["n_groups"])
    optimizer = torch.optim.Adam(model.parameters(), lr=settings["lr"])
    x = torch.randn(16, settings["in_dim"])
    y = torch.randint(0, 2, (16,))
    group = torch.randint(0, 2, (16,))
    for epoch in range(settings["epochs"]):
        logits, group_logits = model(x)
        loss = F.cross_entropy(logits, y) + F.cross_entropy(group_logits, group)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main(SETTINGS)
