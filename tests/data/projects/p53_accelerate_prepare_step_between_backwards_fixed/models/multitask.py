import torch.nn as nn


class TrunkWithAuxHead(nn.Module):
    """A shared trunk, a classification head and an auxiliary regression head."""

    def __init__(self, in_dim=10, hidden=16, num_classes=3, aux_dim=2):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.cls_head = nn.Linear(hidden, num_classes)
        self.aux_head = nn.Linear(hidden, aux_dim)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.aux_head(h)
