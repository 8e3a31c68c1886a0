import torch.nn as nn


class TwoHeadNet(nn.Module):
    def __init__(self, d_in=6, d_hid=12):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_hid), nn.ReLU(), nn.Linear(d_hid, d_hid), nn.ReLU())
        self.cls = nn.Linear(d_hid, 3)
        self.reg = nn.Linear(d_hid, 1)

    def forward(self, x):
        h = self.body(x)
        return self.cls(h), self.reg(h)
