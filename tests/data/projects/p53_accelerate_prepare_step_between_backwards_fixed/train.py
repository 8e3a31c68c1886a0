"""Training with an auxiliary task, launched through the Accelerator wrapper."""
import argparse

import torch

from engine.trainer import train_step
from models.multitask import TrunkWithAuxHead
from utils.accel import Accelerator


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--aux_weight", type=float, default=0.5)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    accelerator = Accelerator()
    model = TrunkWithAuxHead()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    model, optimizer = accelerator.prepare(model, optimizer)
    for step in range(args.steps):
        batch = (torch.randn(8, 10), torch.randint(0, 3, (8,)), torch.randn(8, 2))
        main_loss, aux_loss = train_step(accelerator, model, optimizer, batch, args.aux_weight)
        accelerator.print(step, round(main_loss, 4), round(aux_loss, 4))


if __name__ == "__main__":
    main()
