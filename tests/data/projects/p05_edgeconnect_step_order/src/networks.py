import torch
import torch.nn as nn


class EdgeGenerator(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.InstanceNorm2d(ch), nn.ReLU(True))
        self.decoder = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x):
        return torch.sigmoid(self.decoder(self.encoder(x)))


class Discriminator(nn.Module):
    def __init__(self, in_channels=2, ch=8):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(in_channels, ch, 4, 2, 1), nn.LeakyReLU(0.2, inplace=True))
        self.conv2 = nn.Conv2d(ch, 1, 3, 1, 1)

    def forward(self, x):
        feat = self.conv1(x)
        out = self.conv2(feat)
        return torch.sigmoid(out), [feat]
