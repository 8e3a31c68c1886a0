import torch.nn as nn

from .mixins import InitWeightsMixin


class ResMLP(InitWeightsMixin, nn.Module):
    def __init__(self, dim=16, depth=2, num_classes=4):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])
        self.head = nn.Linear(dim, num_classes)
        self.init_weights()

    def forward(self, x):
        for blk in self.blocks:
            x = x + blk(x).relu()
        return self.head(x)
