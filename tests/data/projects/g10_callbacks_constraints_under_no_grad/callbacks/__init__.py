from .base import Callback
from .constraints import GradScaleCallback, MaxNormConstraint
from .logging import LossLogger

CALLBACKS = {
    "loss_logger": LossLogger,
    "max_norm": MaxNormConstraint,
    "grad_scale": GradScaleCallback,
}


def build_callbacks(cfg):
    return [CALLBACKS[name](cfg) for name in cfg.callbacks]
