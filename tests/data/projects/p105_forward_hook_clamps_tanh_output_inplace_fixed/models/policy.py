import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs_dim=4, act_dim=2):
        super().__init__()
        self.fc = nn.Linear(obs_dim, 16)
        self.act = nn.Tanh()
        self.out = nn.Linear(16, act_dim)

    def forward(self, obs):
        return self.out(self.act(self.fc(obs)))
