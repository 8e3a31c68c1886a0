from .base import Callback
from .constraints import MaxNormConstraint
from .logging import LossLogger

CALLBACKS = {
    "loss_logger": LossLogger,
    "max_norm": MaxNormConstraint,
}


def build_callbacks(cfg):
    return [CALLBACKS[name](cfg) for name in cfg.callbacks]
