"""Mean-teacher style training with an EMA of the weights, evaluated every few steps."""
import argparse

import torch
import torch.nn.functional as F

from models.mlp import MLP
from utils.ema import EMA


def evaluate(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--ema_decay", type=float, default=0.99)
    parser.add_argument("--eval_every", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = MLP(10, 32, 4)
    ema = EMA(model, args.ema_decay)
    ema.register()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x_val, y_val = torch.randn(16, 10), torch.randint(0, 4, (16,))
    for step in range(args.steps):
        x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update()
        if step % args.eval_every == 0:
            ema.apply_shadow()
            print("step", step, "ema acc", evaluate(model, x_val, y_val))
            ema.restore()


if __name__ == "__main__":
    main()
