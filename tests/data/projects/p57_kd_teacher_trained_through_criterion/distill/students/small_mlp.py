import torch.nn as nn


class SmallMLP(nn.Module):
    def __init__(self, in_dim=12, width=16, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU())
        self.fc = nn.Linear(width, num_classes)

    def forward(self, x):
        feat = self.features(x)
        return feat, self.fc(feat)
