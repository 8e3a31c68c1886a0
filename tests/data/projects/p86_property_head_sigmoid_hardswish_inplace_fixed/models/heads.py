import torch.nn as nn


def make_head(dim, n_out):
    return nn.Sequential(
        nn.Linear(dim, dim),
        nn.Sigmoid(),
        nn.Hardswish(),
        nn.Linear(dim, n_out),
    )
