import torch.nn as nn


class BaseHead(nn.Module):
    registry = {}

    def __init_subclass__(cls, name=None, **kwargs):
        super().__init_subclass__(**kwargs)
        BaseHead.registry[name or cls.__name__.lower()] = cls
