import torch
import torch.nn as nn


class GaussianNoise(nn.Module):
    def __init__(self, std=0.15):
        super().__init__()
        self.std = std

    def forward(self, x):
        return x + torch.randn_like(x) * self.std if self.training else x


class ConvNet(nn.Module):
    def __init__(self, n_classes=3):
        super().__init__()
        self.features = nn.Sequential(GaussianNoise(), nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.fc = nn.Linear(32, n_classes)

    def forward(self, x):
        return self.fc(self.features(x))
