import torch.nn as nn

from .layers import GaussianNoise


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class PiNet(nn.Module):
    def __init__(self, n_classes=4, noise_std=0.15):
        super().__init__()
        self.block1 = conv_block(1, 8)
        self.noise = GaussianNoise(noise_std)
        self.block2 = conv_block(8, 8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(8, n_classes)

    def forward(self, x):
        x = self.noise(self.block1(x))
        return self.fc(self.pool(self.block2(x)).flatten(1))
