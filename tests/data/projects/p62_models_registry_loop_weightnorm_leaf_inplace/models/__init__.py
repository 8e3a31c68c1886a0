"""Model zoo: every submodule listed here exposes `Model`; MODELS maps its name to the class."""
import importlib

_ARCHS = ["mlp", "cosine_classifier"]

MODELS = {}
for _name in _ARCHS:
    _module = importlib.import_module("." + _name, package=__name__)
    MODELS[_name] = _module.Model


def get_model(name, **kwargs):
    if name not in MODELS:
        raise KeyError(f"unknown model {name!r}; choose from {sorted(MODELS)}")
    return MODELS[name](**kwargs)
