import importlib

_LAZY = {"Student": "kd.models.nets", "Teacher": "kd.models.nets", "KDTrainer": "kd.trainer"}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)
