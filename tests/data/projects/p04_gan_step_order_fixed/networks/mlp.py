import torch.nn as nn

from .registry import register


@register("mlp_generator")
class MLPGenerator(nn.Module):
    def __init__(self, z_dim, out_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, z):
        return self.net(z)


@register("mlp_discriminator")
class MLPDiscriminator(nn.Module):
    def __init__(self, in_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)
