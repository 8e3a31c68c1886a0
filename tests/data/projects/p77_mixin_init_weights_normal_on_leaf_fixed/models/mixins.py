import math

import torch.nn as nn


class InitWeightsMixin:
    """Shared weight initialisation, as in mmcv's BaseModule / timm's _init_weights."""

    init_std = 0.02

    def init_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, self.init_std)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def num_params(self):
        return sum(math.prod(p.shape) for p in self.parameters())
