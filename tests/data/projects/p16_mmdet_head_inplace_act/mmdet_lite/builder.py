import torch.nn as nn


def build_activation_layer(cfg):
    cfg = dict(cfg)
    layer_type = cfg.pop("type")
    return getattr(nn, layer_type)(**cfg)


def build_optimizer(model, cfg):
    import torch

    cfg = dict(cfg)
    return getattr(torch.optim, cfg.pop("type"))(model.parameters(), **cfg)
