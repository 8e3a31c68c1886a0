"""A small `hydra.utils.instantiate`: nested `_target_` dicts are built first, `_partial_` binds."""
import functools
import importlib


def _locate(path):
    module_name, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_name), attr)


def instantiate(config, *args, **overrides):
    if not (isinstance(config, dict) and "_target_" in config):
        return config
    config = dict(config)
    target = _locate(config.pop("_target_"))
    partial = config.pop("_partial_", False)
    kwargs = {key: instantiate(value) for key, value in config.items()}
    kwargs.update(overrides)
    if partial:
        return functools.partial(target, *args, **kwargs)
    return target(*args, **kwargs)
