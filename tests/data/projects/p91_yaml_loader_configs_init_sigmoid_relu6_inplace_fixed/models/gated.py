import torch.nn as nn


class GatedMLP(nn.Module):
    def __init__(self, in_dim, hidden, act_inplace=False):
        super().__init__()
        self.fc = nn.Linear(in_dim, hidden)
        self.gate = nn.Sequential(
            nn.Linear(in_dim, hidden),
            nn.Sigmoid(),
            nn.ReLU6(),
        )
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        return self.out(self.fc(x) * self.gate(x))
