import torch.nn as nn


class MLPEncoder(nn.Module):
    def __init__(self, in_dim=12, hidden=32, dim=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, dim))

    def forward(self, x):
        return self.net(x)
