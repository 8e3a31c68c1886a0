import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ret_benchmark.config import cfg  # noqa: E402
from ret_benchmark.losses import build_loss  # noqa: E402
from ret_benchmark.modeling import XBM, build_model  # noqa: E402


def do_train(cfg, model, criterion, optimizer, xbm, batches):
    for iteration, (images, targets) in enumerate(batches, start=1):
        feats = model(images)
        loss = criterion(feats, targets, feats, targets)
        if cfg["XBM"]["ENABLE"] and iteration > cfg["XBM"]["START_ITERATION"]:
            xbm.enqueue_dequeue(feats.detach(), targets.detach())
            xbm_feats, xbm_targets = xbm.get()
            loss = loss + cfg["XBM"]["WEIGHT"] * criterion(feats, targets, xbm_feats, xbm_targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"iter {iteration}: loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    model = build_model(cfg)
    criterion = build_loss(cfg)
    optimizer = getattr(torch.optim, cfg["SOLVER"]["OPTIMIZER"])(model.parameters(), lr=cfg["SOLVER"]["BASE_LR"])
    xbm = XBM(cfg, cfg["MODEL"]["EMBED_DIM"])
    batches = [(torch.randn(6, 10), torch.randint(1, 4, (6,))) for _ in range(cfg["SOLVER"]["MAX_ITERS"])]
    do_train(cfg, model, criterion, optimizer, xbm, batches)


if __name__ == "__main__":
    main()
