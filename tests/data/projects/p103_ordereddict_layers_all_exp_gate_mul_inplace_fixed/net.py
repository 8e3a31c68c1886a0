from collections import OrderedDict

import torch.nn as nn

import layers


def build_net():
    blocks = OrderedDict()
    for name in layers.__all__:
        blocks[name.lower()] = getattr(layers, name)()
    return nn.Sequential(OrderedDict(list(blocks.items()) + [("head", nn.Linear(6, 1))]))
