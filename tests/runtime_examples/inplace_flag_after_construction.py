"""The in-place flag is set after construction; the in-place ReLU then overwrites what sigmoid saved."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU())
        for m in self.modules():
            if isinstance(m, (nn.ReLU, nn.Dropout)):
                m.inplace = True

    def forward(self, x):
        return self.body(x)


torch.manual_seed(0)
net = Net()
try:
    net(torch.randn(2, 4)).sum().backward()
    print("no error")
except RuntimeError as exc:
    print("error:", str(exc).split(":")[0])
