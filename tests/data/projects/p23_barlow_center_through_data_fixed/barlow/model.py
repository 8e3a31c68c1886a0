import torch
import torch.nn as nn

from barlow.ops import center_, off_diagonal


class BarlowTwins(nn.Module):
    def __init__(self, in_dim=10, dim=8, lambd=5e-3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU())
        self.projector = nn.Linear(16, dim)
        self.lambd = lambd

    def embed(self, x):
        z = torch.tanh(self.projector(self.backbone(x)))
        return center_(z)

    def forward(self, y1, y2):
        z1, z2 = self.embed(y1), self.embed(y2)
        c = (z1 / z1.norm(dim=0)).T @ (z2 / z2.norm(dim=0))
        on_diag = (torch.diagonal(c) - 1).pow(2).sum()
        return on_diag + self.lambd * off_diagonal(c).pow(2).sum()
