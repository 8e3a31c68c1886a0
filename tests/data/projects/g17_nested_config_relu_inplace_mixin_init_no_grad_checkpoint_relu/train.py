import torch
import torch.nn.functional as F

from configs.default import cfg
from models.net import Net


def main():
    torch.manual_seed(0)
    model = Net(cfg["model"])
    optimizer = getattr(torch.optim, cfg["optim"]["name"])(model.parameters(), lr=cfg["optim"]["lr"])
    model.train()
    for step in range(cfg["train"]["steps"]):
        x = torch.randn(cfg["train"]["batch_size"], 8)
        y = torch.randint(0, 3, (cfg["train"]["batch_size"],))
        loss = F.nll_loss(model(x).log(), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
