import torch.nn as nn

from .base import BaseHead


class SmoothHead(BaseHead, name="smooth"):
    def __init__(self, dim, num_classes, momentum=0.5):
        super().__init__()
        self.fc = nn.Linear(dim, num_classes)
        self.momentum = momentum
        self.prev = None

    def forward(self, x):
        out = self.fc(x)
        if self.prev is not None:
            out = self.momentum * self.prev + (1 - self.momentum) * out
        self.prev = out
        return out
