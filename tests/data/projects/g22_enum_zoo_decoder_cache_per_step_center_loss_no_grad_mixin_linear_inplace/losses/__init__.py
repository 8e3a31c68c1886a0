import importlib


def get_loss(name, **kwargs):
    return importlib.import_module(f"losses.{name}").Loss(**kwargs)
