import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Cosine-similarity classifier (few-shot baselines): logits = s * cos(x, w_c)."""

    def __init__(self, in_dim=20, num_classes=5, scale=10.0):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU())
        self.weight = nn.Parameter(torch.randn(num_classes, 32))
        self.scale = scale

    def forward(self, x):
        feat = F.normalize(self.backbone(x), dim=1)
        # keep the class prototypes on the unit sphere
        self.weight.div_(self.weight.norm(dim=1, keepdim=True))
        return self.scale * feat @ self.weight.t()
