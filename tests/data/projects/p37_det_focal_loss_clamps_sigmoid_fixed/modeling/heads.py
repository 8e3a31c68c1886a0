import torch.nn as nn

from core.registry import HEADS


@HEADS.register
class RetinaHead(nn.Module):
    def __init__(self, in_channels, num_classes, feat_channels=8):
        super().__init__()
        self.cls_convs = nn.Sequential(nn.Conv2d(in_channels, feat_channels, 3, padding=1), nn.ReLU())
        self.retina_cls = nn.Conv2d(feat_channels, num_classes, 3, padding=1)

    def forward(self, x):
        return self.retina_cls(self.cls_convs(x))
