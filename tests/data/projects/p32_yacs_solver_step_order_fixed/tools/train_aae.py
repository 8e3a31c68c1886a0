import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from config import cfg  # noqa: E402
from engine.build import build_nets, build_optimizer  # noqa: E402
from engine.loop import regularization_step  # noqa: E402


def main():
    torch.manual_seed(0)
    enc, disc = build_nets(cfg)
    opt_enc = build_optimizer(cfg, enc.parameters())
    opt_disc = build_optimizer(cfg, disc.parameters())
    for it in range(cfg.SOLVER.ITERS):
        d, g = regularization_step(enc, disc, opt_enc, opt_disc, torch.randn(16, cfg.MODEL.DIM))
        print(f"iter {it}: d {d:.4f} g {g:.4f}")


if __name__ == "__main__":
    main()
