import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import mmdet_lite.models  # noqa: E402,F401  (fills the registries)
from mmdet_lite.builder import build_optimizer  # noqa: E402
from mmdet_lite.registry import DETECTORS  # noqa: E402


def parse_losses(losses):
    return sum(v for v in losses.values())


def main():
    cfg = importlib.import_module("configs.retinanet_lite")
    torch.manual_seed(0)
    model = DETECTORS.build(cfg.model)
    optimizer = build_optimizer(model, cfg.optimizer)
    for it in range(cfg.total_iters):
        img = torch.randn(2, 3, 16, 16)
        gt_labels = torch.randint(0, 3, (2, 8, 8))
        gt_boxes = torch.rand(2, 4, 8, 8)
        loss = parse_losses(model.forward_train(img, gt_labels, gt_boxes))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iter {it}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
