import torch
import torch.nn as nn

import losses.bounded  # noqa: F401
from engine import ManualTrainer
from utils.ema import ModelEMA


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [torch.randn(6, 4) for _ in range(3)]
    loss = ManualTrainer(model, opt, ModelEMA(model)).fit(loader)
    print(loss.item())


if __name__ == "__main__":
    main()
