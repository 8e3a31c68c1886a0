import torch.nn as nn


def task_head(dim, n_out):
    return nn.Sequential(nn.ReLU(), nn.Dropout(0.1), nn.Linear(dim, n_out))


def adversary_head(dim, n_groups):
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, n_groups))
