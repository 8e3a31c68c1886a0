import argparse

import torch
import torch.nn.functional as F

from zoo import Arch, build_model


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="MLP")
    parser.add_argument("--lr", type=float, default=0.1)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    model = build_model(Arch.from_str(args.arch), dim=10, hidden=16)
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    for _ in range(3):
        x, y = torch.randn(8, 10), torch.randn(8, 1)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("done", loss.item())


if __name__ == "__main__":
    main()
