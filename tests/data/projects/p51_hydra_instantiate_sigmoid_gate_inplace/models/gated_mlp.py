import torch
import torch.nn as nn


class GatedMLP(nn.Module):
    """gMLP-style gating: a sigmoid gate scaled to (0, 2) multiplies the hidden features."""

    def __init__(self, in_dim, hidden, num_classes):
        super().__init__()
        self.fc = nn.Linear(in_dim, hidden)
        self.gate = nn.Linear(in_dim, hidden)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        g.mul_(2.0)
        h = self.fc(x) * g
        return self.head(h)
