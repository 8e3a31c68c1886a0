import torch.nn as nn


class Denoiser(nn.Module):
    def __init__(self, channels, hidden):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(channels, hidden), nn.GELU())
        self.mean = nn.Linear(hidden, channels)
        self.logvar = nn.Linear(hidden, channels)

    def forward(self, x):
        h = self.body(x)
        return self.mean(h), self.logvar(h)
