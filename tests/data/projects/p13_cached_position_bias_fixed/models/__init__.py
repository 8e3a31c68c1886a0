import functools

from .vit import TinyViT

_MODELS = {
    "tiny_vit_d1": functools.partial(TinyViT, depth=1, heads=2),
    "tiny_vit_d2": functools.partial(TinyViT, depth=2, heads=2),
}


def create_model(name, **kwargs):
    return _MODELS[name](**kwargs)
