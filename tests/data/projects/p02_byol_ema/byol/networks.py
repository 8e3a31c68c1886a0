import torch.nn as nn


def mlp(dim, hidden, out):
    return nn.Sequential(nn.Linear(dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(inplace=True), nn.Linear(hidden, out))


class Encoder(nn.Module):
    def __init__(self, in_dim, hidden, proj):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.projector = mlp(hidden, hidden, proj)

    def forward(self, x):
        return self.projector(self.backbone(x))
