import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, latent_dim, out_dim):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(latent_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, out_dim))

    def forward(self, z):
        return self.model(z)


class Critic(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.model = nn.Sequential(nn.Linear(in_dim, 32), nn.Tanh(), nn.Linear(32, 1))

    def forward(self, x):
        return self.model(x)
