import torch
import torch.nn as nn


class EnergyNet(nn.Module):
    def __init__(self, opts):
        super().__init__()
        self.fc = nn.Linear(opts.dim, opts.dim)
        self.out = nn.Linear(opts.dim, 1)
        self.norm_inplace = opts.norm_inplace

    def forward(self, x):
        e = torch.exp(self.fc(x))
        if self.norm_inplace:
            e.div_(e.sum(dim=-1, keepdim=True))
        else:
            e = e / e.sum(dim=-1, keepdim=True)
        return self.out(e)
