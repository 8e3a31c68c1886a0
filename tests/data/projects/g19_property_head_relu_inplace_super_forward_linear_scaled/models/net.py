import torch
import torch.nn as nn

from .base import Projection


class ScaledProjection(Projection):
    def __init__(self, d_in, d_out, gain=0.5):
        super().__init__(d_in, d_out)
        self.gain = gain

    def forward(self, x):
        out = super().forward(x)
        out *= self.gain
        return torch.tanh(out)


class MultiHeadNet(nn.Module):
    def __init__(self, dim, tasks):
        super().__init__()
        self.trunk = ScaledProjection(dim, dim)
        self.heads = nn.ModuleDict({
            name: nn.Sequential(nn.Linear(dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, n))
            for name, n in tasks.items()
        })
        self.task = next(iter(tasks))

    @property
    def head(self):
        return self.heads[self.task]

    def forward(self, x):
        return self.head(self.trunk(x))
