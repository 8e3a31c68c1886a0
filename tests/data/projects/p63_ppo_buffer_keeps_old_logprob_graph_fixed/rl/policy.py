import torch
import torch.nn as nn
from torch.distributions import Categorical


class MLPPolicy(nn.Module):
    def __init__(self, obs_dim=4, n_actions=2, hidden=32):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, n_actions))

    def dist(self, obs):
        return Categorical(logits=self.body(obs))

    def act(self, obs):
        d = self.dist(obs)
        action = d.sample()
        return action, d.log_prob(action)
