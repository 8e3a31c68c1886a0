import torch.nn as nn

from ..layers import mlp


class Detector(nn.Module):
    def __init__(self, head):
        super().__init__()
        self.backbone = mlp(16, 32)
        self.head = head

    def forward(self, x):
        return self.head(self.backbone(x))
