import torch
import torch.nn as nn


class GaussianNoise(nn.Module):
    """Additive Gaussian noise on the activations during training (Pi-model)."""

    def __init__(self, std=0.15):
        super().__init__()
        self.std = std

    def forward(self, x):
        if self.training:
            x.add_(torch.randn_like(x) * self.std)
        return x
