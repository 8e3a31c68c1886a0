import importlib


def get_loss(name, **kwargs):
    module = importlib.import_module(f"losses.{name}")
    return module.Loss(**kwargs)
