import argparse

import torch
import torch.nn.functional as F

import models


def get_args():
    parser = argparse.ArgumentParser("zoo trainer")
    parser.add_argument("--model", default="gated_mixture_small", help="name of a model in models/")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    model = models.create_model(args.model, in_dim=8, num_classes=3)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    for epoch in range(args.epochs):
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"epoch {epoch} loss {loss.item():.4f}")


if __name__ == "__main__":
    main(get_args())
