import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.gain = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        inv = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        inv.mul_(2.0)
        return x * inv * self.gain


class MLPNet(nn.Module):
    def __init__(self, dim=10, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.norm = RMSNorm(hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.fc2(self.norm(self.fc1(x)))


class ConvMixerLite(nn.Module):
    def __init__(self, dim=10, hidden=16):
        super().__init__()
        self.mix = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(torch.relu(self.mix(x)))
