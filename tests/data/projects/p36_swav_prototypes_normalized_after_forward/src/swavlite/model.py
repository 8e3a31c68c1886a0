import torch.nn as nn
import torch.nn.functional as F


class SwAVModel(nn.Module):
    def __init__(self, in_dim=12, feat_dim=8, n_prototypes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, feat_dim))
        self.prototypes = nn.Linear(feat_dim, n_prototypes, bias=False)

    def forward(self, x):
        z = F.normalize(self.backbone(x), dim=1)
        return z, self.prototypes(z)
