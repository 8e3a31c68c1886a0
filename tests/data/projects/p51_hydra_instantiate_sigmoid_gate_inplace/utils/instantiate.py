"""A small `hydra.utils.instantiate`: build the object a `_target_` dotted path names."""
import importlib


def _locate(path):
    module_name, _, attr = path.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, attr)


def instantiate(config, *args, **overrides):
    config = dict(config)
    target = _locate(config.pop("_target_"))
    config.update(overrides)
    return target(*args, **config)
