import torch.nn as nn


class MultiLevelHead(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        self.cls = nn.Conv2d(channels, num_classes, 3, padding=1)
        self.reg = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, feats):
        return [self.cls(f) for f in feats], [self.reg(f) for f in feats]
