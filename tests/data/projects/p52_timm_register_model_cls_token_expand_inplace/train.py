#!/usr/bin/env python3
"""ImageNet training script (reduced): the model is created by name from the registry."""
import argparse

import torch
import torch.nn.functional as F

from timmlite import create_model

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("--model", default="vit_tiny_patch4", type=str, metavar="MODEL")
parser.add_argument("--num-classes", type=int, default=5)
parser.add_argument("--lr", type=float, default=5e-4)
parser.add_argument("--epochs", type=int, default=2)


def train_one_epoch(epoch, model, optimizer):
    model.train()
    for _ in range(2):
        x = torch.randn(8, 4, 12)
        target = torch.randint(0, 5, (8,))
        loss = F.cross_entropy(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, round(loss.item(), 4))


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    model = create_model(args.model, num_classes=args.num_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        train_one_epoch(epoch, model, optimizer)


if __name__ == "__main__":
    main()
