import torch.nn as nn

from .utils import MemoryEfficientSwish


class MBBlock(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.swish = MemoryEfficientSwish()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1, groups=ch)
        self.project = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        out = self.project(self.conv(self.swish(x)))
        x = x + out
        return x


class TinyEfficientNet(nn.Module):
    def __init__(self, ch=4, blocks=2, num_classes=3):
        super().__init__()
        self.stem = nn.Conv2d(1, ch, 3, padding=1)
        self.blocks = nn.Sequential(*[MBBlock(ch) for _ in range(blocks)])
        self.head = nn.Linear(ch, num_classes)

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))
