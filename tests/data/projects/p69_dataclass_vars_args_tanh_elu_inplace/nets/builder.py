import torch.nn as nn

SQUASH = {"tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "none": nn.Identity}
ACTS = {"elu": nn.ELU, "relu": nn.ReLU, "hardtanh": nn.Hardtanh}


def block(cfg):
    return nn.Sequential(
        nn.Linear(cfg.width, cfg.width),
        SQUASH[cfg.squash](),
        ACTS[cfg.act](inplace=cfg.act_inplace),
    )


def build_model(cfg, in_dim=4, out_dim=2):
    layers = [nn.Linear(in_dim, cfg.width)]
    layers += [block(cfg) for _ in range(cfg.depth)]
    layers.append(nn.Linear(cfg.width, out_dim))
    return nn.Sequential(*layers)
