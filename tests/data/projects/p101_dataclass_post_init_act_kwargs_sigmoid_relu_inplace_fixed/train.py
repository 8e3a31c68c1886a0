import torch

from config import ModelConfig
from model import GatedMLP


def main():
    torch.manual_seed(0)
    cfg = ModelConfig()
    model = GatedMLP(cfg)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, cfg.in_dim), torch.randn(6, 1)
    for _ in range(2):
        loss = (model(x) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
