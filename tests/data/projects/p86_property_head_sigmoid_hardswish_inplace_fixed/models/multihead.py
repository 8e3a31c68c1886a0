import torch.nn as nn

from .heads import make_head


class MultiHeadNet(nn.Module):
    def __init__(self, dim, tasks):
        super().__init__()
        self.trunk = nn.Linear(dim, dim)
        self.heads = nn.ModuleDict({name: make_head(dim, n) for name, n in tasks.items()})
        self.task = next(iter(tasks))

    @property
    def head(self):
        return self.heads[self.task]

    def forward(self, x):
        return self.head(self.trunk(x))
