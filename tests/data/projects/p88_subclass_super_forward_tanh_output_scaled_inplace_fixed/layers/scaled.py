import torch.nn as nn

from layers.base import TanhProjection


class ScaledTanhProjection(TanhProjection):
    def __init__(self, d_in, d_out, gain=1.7159):
        super().__init__(d_in, d_out)
        self.gain = gain

    def forward(self, x):
        out = super().forward(x)
        out = out * self.gain
        return out
