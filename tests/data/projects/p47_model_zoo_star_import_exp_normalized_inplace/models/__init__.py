"""Model zoo: every architecture module exports its constructors through __all__."""
from .mlp import *
from .gated import *


def create_model(name, **kwargs):
    if name not in globals():
        raise ValueError(f"unknown model {name!r}")
    return globals()[name](**kwargs)
