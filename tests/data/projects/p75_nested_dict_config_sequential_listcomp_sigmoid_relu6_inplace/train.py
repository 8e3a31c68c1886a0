import torch
import torch.nn.functional as F

from configs.default import cfg
from models.net import build_model


def main():
    torch.manual_seed(0)
    model = build_model(cfg["model"])
    opt_cfg = cfg["optim"]
    optimizer = getattr(torch.optim, opt_cfg["name"])(model.parameters(), lr=opt_cfg["lr"])
    for step in range(cfg["train"]["steps"]):
        x = torch.randn(cfg["train"]["batch_size"], 8)
        y = torch.randint(0, 3, (cfg["train"]["batch_size"],))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
