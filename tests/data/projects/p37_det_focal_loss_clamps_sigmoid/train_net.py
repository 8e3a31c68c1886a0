import importlib

import torch

import modeling  # noqa: F401
from core import build_head, build_loss


def main():
    cfg = importlib.import_module("configs.retina_tiny")
    torch.manual_seed(0)
    head = build_head(cfg.model["head"])
    criterion = build_loss(cfg.model["loss_cls"])
    optimizer = torch.optim.SGD(head.parameters(), **cfg.optimizer)
    for it in range(2):
        feats = torch.randn(2, 4, 6, 6)
        target = (torch.rand(2, 3, 6, 6) > 0.9).float()
        loss = criterion(head(feats), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("iter", it, "loss", loss.item())


if __name__ == "__main__":
    main()
