import argparse

import torch
import torch.nn as nn

from vitlite import ViT


def get_args_parser():
    parser = argparse.ArgumentParser("ViT training", add_help=False)
    parser.add_argument("--epochs", default=2, type=int)
    parser.add_argument("--lr", default=1e-3, type=float)
    parser.add_argument("--drop_path", default=0.1, type=float)
    return parser


def main(args):
    torch.manual_seed(0)
    model = ViT(drop_path_rate=args.drop_path)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        samples, targets = torch.randn(8, 4, 12), torch.randint(0, 5, (8,))
        loss = criterion(model(samples), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(epoch, round(loss.item(), 4))


if __name__ == "__main__":
    args = get_args_parser().parse_args()
    main(args)
