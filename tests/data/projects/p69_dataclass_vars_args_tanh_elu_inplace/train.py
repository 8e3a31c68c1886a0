import argparse

import torch
import torch.nn.functional as F

from config import TrainConfig
from nets.builder import build_model


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--squash", default="tanh")
    p.add_argument("--lr", type=float, default=1e-2)
    return p.parse_args()


def main():
    cfg = TrainConfig(**vars(parse_args()))
    torch.manual_seed(0)
    model = build_model(cfg)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for step in range(cfg.steps):
        x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(step, loss.item())


if __name__ == "__main__":
    main()
