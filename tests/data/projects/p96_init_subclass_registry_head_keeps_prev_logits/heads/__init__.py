from .base import BaseHead
from . import linear, smooth  # noqa: F401  (register the heads)


def build_head(name, **kwargs):
    return BaseHead.registry[name](**kwargs)
