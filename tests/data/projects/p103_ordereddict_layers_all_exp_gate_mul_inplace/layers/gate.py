import torch.nn as nn


class HalfGate(nn.Module):
    def forward(self, x):
        return x.mul_(0.5)
