import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self, obs_dim, hidden):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU())

    def forward(self, obs):
        return self.net(obs)


class QHead(nn.Module):
    def __init__(self, hidden, n_actions):
        super().__init__()
        self.fc = nn.Linear(hidden, n_actions)

    def forward(self, z):
        return self.fc(z)
