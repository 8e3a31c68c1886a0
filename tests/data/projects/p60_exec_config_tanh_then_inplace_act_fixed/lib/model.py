import torch.nn as nn


def make_mlp(in_dim, out_dim, cfg):
    layers = []
    d = in_dim
    for h in cfg["hidden"]:
        layers.append(nn.Linear(d, h))
        # bounded pre-activation, then a clipped activation on top of it
        layers.append(getattr(nn, cfg["norm_act"])())
        layers.append(getattr(nn, cfg["act"])(**cfg["act_kwargs"]))
        d = h
    layers.append(nn.Linear(d, out_dim))
    return nn.Sequential(*layers)
