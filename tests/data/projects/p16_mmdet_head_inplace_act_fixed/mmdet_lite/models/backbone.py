import torch.nn as nn

from ..registry import BACKBONES


@BACKBONES.register_module()
class TinyBackbone(nn.Module):
    def __init__(self, out_channels):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, out_channels, 3, 2, 1), nn.BatchNorm2d(out_channels), nn.ReLU())
        self.out = nn.Conv2d(out_channels, out_channels, 3, 1, 1)

    def forward(self, x):
        return self.out(self.stem(x))
