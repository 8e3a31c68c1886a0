import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, z_dim=8, out=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(z_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, out), nn.Tanh())

    def forward(self, z):
        return self.net(z)
