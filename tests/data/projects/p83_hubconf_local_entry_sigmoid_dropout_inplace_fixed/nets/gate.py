import torch.nn as nn


class GatedMLP(nn.Module):
    def __init__(self, dim=16, n_classes=4, p=0.1):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = nn.Sequential(
            nn.Linear(dim, dim),
            nn.Sigmoid(),
            nn.Dropout(p),
        )
        self.head = nn.Linear(dim, n_classes)

    def forward(self, x):
        return self.head(self.proj(x) * self.gate(x))
