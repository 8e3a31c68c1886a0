import torch.nn as nn

__all__ = ["mlp_small", "mlp_base"]


def _mlp(dims):
    layers = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), nn.GELU()]
    return nn.Sequential(*layers[:-1])


def mlp_small(in_dim=8, num_classes=3):
    return _mlp([in_dim, 16, num_classes])


def mlp_base(in_dim=8, num_classes=3):
    return _mlp([in_dim, 64, 64, num_classes])
