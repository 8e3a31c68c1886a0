import torch.nn as nn


class MLPGenerator(nn.Module):
    def __init__(self, nz, dim, hidden=32):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, hidden), nn.ReLU(True), nn.Linear(hidden, dim))

    def forward(self, z):
        return self.main(z)


class MLPCritic(nn.Module):
    def __init__(self, dim, hidden=32):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(True), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.main(x).mean(0).view(1)
