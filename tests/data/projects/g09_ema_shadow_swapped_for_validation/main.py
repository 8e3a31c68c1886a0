"""Train with an EMA of the weights; validate the EMA weights at the end of each epoch."""
import argparse

import torch

from engine.loops import train_one_epoch, validate_with_ema
from models.mlp import MLP
from utils.ema import EMA


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--ema_decay", type=float, default=0.99)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = MLP(10, 32, 4)
    ema = EMA(model, args.ema_decay)
    ema.register()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x_val, y_val = torch.randn(16, 10), torch.randint(0, 4, (16,))
    for epoch in range(args.epochs):
        batches = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(2)]
        loss = train_one_epoch(model, optimizer, ema, batches)
        print("epoch", epoch, "loss", loss, "ema acc", validate_with_ema(model, ema, x_val, y_val))


if __name__ == "__main__":
    main()
