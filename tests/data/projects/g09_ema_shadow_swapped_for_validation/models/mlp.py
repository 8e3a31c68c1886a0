import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, d_in, hidden, classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)
