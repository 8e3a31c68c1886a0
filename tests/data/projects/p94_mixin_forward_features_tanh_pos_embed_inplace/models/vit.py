import torch
import torch.nn as nn

from .mixins import FeatureMixin


class TinyViT(FeatureMixin, nn.Module):
    def __init__(self, patch_dim=12, dim=16, tokens=5, depth=2, num_classes=3):
        super().__init__()
        self.stem = nn.Sequential(nn.Linear(patch_dim, dim), nn.Tanh())
        self.pos_embed = nn.Parameter(torch.zeros(1, tokens, dim))
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.forward_head(self.forward_features(x))
