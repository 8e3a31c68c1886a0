import torch
import torch.nn as nn

from utils.decorators import normalized


class Policy(nn.Module):
    def __init__(self, obs_dim=6, n_actions=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 32), nn.ReLU(), nn.Linear(32, n_actions))

    @normalized(dim=-1)
    def forward(self, obs):
        return torch.exp(self.body(obs))
