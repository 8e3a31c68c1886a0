import torch
import torch.nn as nn


class TanhProjection(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.fc = nn.Linear(d_in, d_out)

    def forward(self, x):
        return torch.tanh(self.fc(x))
