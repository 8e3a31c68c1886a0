import torch.nn as nn
import torch.nn.functional as F


class Embedder(nn.Module):
    def __init__(self, in_dim, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, x):
        return F.normalize(self.body(x), dim=1)


def build_model(cfg, in_dim=10):
    return Embedder(in_dim, cfg["MODEL"]["EMBED_DIM"])
