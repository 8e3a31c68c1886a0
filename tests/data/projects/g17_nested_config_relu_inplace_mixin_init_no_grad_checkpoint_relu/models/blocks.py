import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c_in, c_out, act="ReLU", act_kwargs=None):
        super().__init__()
        self.fc = nn.Linear(c_in, c_out)
        self.act = getattr(nn, act)(**(act_kwargs or {}))

    def forward(self, x):
        h = self.fc(x)
        h = self.act(h)
        return h
