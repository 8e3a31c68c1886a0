import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.fc = nn.Linear(cfg.dim, cfg.hidden[0])
        self.relu = nn.ReLU(**cfg.act_kwargs)
        self.act = nn.Tanh()
        self.out = nn.Linear(cfg.hidden[0], 2)

    def forward(self, obs):
        return self.out(self.act(self.relu(self.fc(obs))))
