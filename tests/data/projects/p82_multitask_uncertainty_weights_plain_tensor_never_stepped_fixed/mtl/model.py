import torch.nn as nn

from tasks import OUT_DIMS, TASKS


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim=10, hidden=24):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.heads = nn.ModuleDict({t: nn.Linear(hidden, OUT_DIMS[t]) for t in TASKS})

    def forward(self, x):
        h = self.trunk(x)
        return {t: head(h) for t, head in self.heads.items()}
