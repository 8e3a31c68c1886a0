from .focal import FocalLoss

LOSSES = {"focal": FocalLoss}


def build_loss(name, **kwargs):
    return LOSSES[name](**kwargs)
