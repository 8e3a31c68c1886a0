import torch.nn as nn

from ...layers import mlp


class ClsHead(nn.Module):
    def __init__(self, c_in, num_classes):
        super().__init__()
        self.body = mlp(c_in, c_in)
        self.out = nn.Linear(c_in, num_classes)

    def forward(self, x):
        return self.out(self.body(x))
