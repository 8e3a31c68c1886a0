import torch
import torch.nn as nn


class TinyUNet(nn.Module):
    def __init__(self, in_ch=1, n_classes=2, ch=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(in_ch, ch, 3, padding=1), nn.ReLU(inplace=True))
        self.pool = nn.MaxPool2d(2)
        self.mid = nn.Sequential(nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(inplace=True))
        self.up = nn.Upsample(scale_factor=2)
        self.out = nn.Conv2d(2 * ch, n_classes, 1)

    def forward(self, x):
        d = self.down(x)
        m = self.up(self.mid(self.pool(d)))
        return self.out(torch.cat([d, m], dim=1))
