from functools import partial

from .vit import TinyViT

_model_entrypoints = {
    "vit_micro": partial(TinyViT, dim=8, depth=1, num_heads=2),
    "vit_tiny": partial(TinyViT, dim=16, depth=2, num_heads=4),
}


def create_model(name, **kwargs):
    return _model_entrypoints[name](**kwargs)
