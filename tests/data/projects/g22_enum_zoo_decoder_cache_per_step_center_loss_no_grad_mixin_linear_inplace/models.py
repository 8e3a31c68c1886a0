import enum

import torch
import torch.nn as nn


class FeatureMixin:
    def forward_features(self, x):
        x = self.stem(x)
        x += self.pos_embed
        self.cache = x
        return torch.tanh(x + self.cache)


class TokenNet(FeatureMixin, nn.Module):
    def __init__(self, patch_dim=6, dim=8, tokens=4):
        super().__init__()
        self.stem = nn.Linear(patch_dim, dim)
        self.pos_embed = nn.Parameter(torch.zeros(1, tokens, dim))
        self.cache = None

    def forward(self, x):
        return self.forward_features(x).mean(1)


class Arch(enum.Enum):
    TOKEN = "token"


ZOO = {Arch.TOKEN: TokenNet}
