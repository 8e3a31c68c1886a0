import torch
import torch.nn as nn
import torch.nn.functional as F


class LearnedNoiseSchedule(nn.Module):
    """gamma(t) = -log SNR(t), monotone in t (Kingma et al., Variational Diffusion Models)."""

    def __init__(self, gamma_min=-5.0, gamma_max=5.0):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
        self.b = nn.Parameter(torch.tensor([gamma_min]))
        self.span = gamma_max - gamma_min

    def forward(self, t):
        return self.b + F.softplus(self.w) * self.span * t
