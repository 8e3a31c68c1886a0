"""Segmentation training (reduced): an attention-gated UNet on random masks."""
import argparse

import torch
import torch.nn.functional as F

from nets import GatedUNet


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--depth", type=int, default=3)
    return p.parse_args()


def main():
    args = get_args()
    torch.manual_seed(0)
    net = GatedUNet(depth=args.depth)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        img = torch.randn(2, 3, 8, 8)
        mask = torch.randint(0, 2, (2, 8, 8))
        loss = F.cross_entropy(net(img), mask)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(epoch, round(loss.item(), 4))


if __name__ == "__main__":
    main()
