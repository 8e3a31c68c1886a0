from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

from heads import build_head

cfg = SimpleNamespace(head="smooth", dim=8, num_classes=3, lr=0.05)


def main():
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(5, cfg.dim), nn.ReLU())
    head = build_head(cfg.head, dim=cfg.dim, num_classes=cfg.num_classes)
    params = list(backbone.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=cfg.lr)
    x = torch.randn(6, 5)
    y = torch.randint(0, cfg.num_classes, (6,))
    for _ in range(3):
        loss = F.cross_entropy(head(backbone(x)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
