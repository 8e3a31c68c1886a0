import torch.nn as nn

from .functions import inplace_leaky_relu


class InPlaceActBlock(nn.Module):
    def __init__(self, cin, cout, slope=0.1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn = nn.BatchNorm2d(cout)
        self.slope = slope

    def forward(self, x):
        return inplace_leaky_relu(self.bn(self.conv(x)), self.slope)
