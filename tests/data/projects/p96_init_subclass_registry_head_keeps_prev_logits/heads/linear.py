import torch.nn as nn

from .base import BaseHead


class LinearHead(BaseHead, name="linear"):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, x):
        return self.fc(x)
