import torch
import torch.nn as nn

from utils.ema import ModelEMA


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    ema = ModelEMA(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    for _ in range(2):
        loss = (model(x) - y).pow(2).mean()
        ema.update(model)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
