import torch
import torch.nn as nn


class GLUBlock(nn.Module):
    def __init__(self, dim, scale=0.5):
        super().__init__()
        self.value = nn.Linear(dim, dim)
        self.gate = nn.Linear(dim, dim)
        self.scale = scale

    def forward(self, x):
        g = torch.tanh(self.gate(x))
        g = g * self.scale
        return x + self.value(x) * g
