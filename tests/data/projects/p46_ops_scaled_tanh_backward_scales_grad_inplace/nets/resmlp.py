import torch.nn as nn

from ops import scaled_tanh


class ResidualBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + scaled_tanh(self.fc(x))


class ResMLP(nn.Module):
    def __init__(self, d_in, dim, classes, depth=2):
        super().__init__()
        self.stem = nn.Linear(d_in, dim)
        self.blocks = nn.Sequential(*[ResidualBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))
