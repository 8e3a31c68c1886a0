import importlib

_LAZY = {
    "TextClassifier": "textcls.modeling.classifier",
    "Config": "textcls.config",
}


def __getattr__(name):
    if name in _LAZY:
        module = importlib.import_module(_LAZY[name])
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
