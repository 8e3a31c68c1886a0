import torch.nn as nn


class HalfGate(nn.Module):
    def forward(self, x):
        return x.mul(0.5)
