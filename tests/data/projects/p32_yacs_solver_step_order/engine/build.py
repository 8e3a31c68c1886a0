import torch
import torch.nn as nn


def build_nets(cfg):
    enc = nn.Sequential(nn.Linear(cfg.MODEL.DIM, 8), nn.ReLU(), nn.Linear(8, 4))
    disc = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    return enc, disc


def build_optimizer(cfg, params):
    return getattr(torch.optim, cfg.SOLVER.OPTIMIZER)(params, lr=cfg.SOLVER.LR)
