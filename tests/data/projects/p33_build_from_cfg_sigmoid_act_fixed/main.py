import importlib

import torch

from seglite.blocks import BLOCKS
from seglite.registry import build_from_cfg


def run():
    cfg = importlib.import_module("configs.tiny_attn")
    torch.manual_seed(0)
    net = build_from_cfg(cfg.model, BLOCKS)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.schedule["lr"])
    for step in range(cfg.schedule["iters"]):
        x = torch.randn(2, 4, 6, 6)
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(f"step {step}: {loss.item():.4f}")


if __name__ == "__main__":
    run()
