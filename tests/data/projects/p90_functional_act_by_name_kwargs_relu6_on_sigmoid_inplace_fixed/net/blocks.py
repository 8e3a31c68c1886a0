import torch
import torch.nn as nn
import torch.nn.functional as F

from config import ACT, ACT_KWARGS


class SEGate(nn.Module):
    def __init__(self, dim, act=ACT, act_kwargs=ACT_KWARGS):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = getattr(F, act)
        self.act_kwargs = act_kwargs

    def forward(self, x):
        g = torch.sigmoid(self.fc(x))
        g = self.act(g, **self.act_kwargs)
        return x * g
