import torch.nn as nn

from .blocks import make_layers

__all__ = ["VGG", "vgg_tiny", "vgg_small"]

cfgs = {
    "A": [8, "M", 16, "M"],
    "B": [8, "T", "C", "M", 16, "M"],
}


class VGG(nn.Module):
    def __init__(self, features, num_classes=10):
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Linear(16 * 2 * 2, num_classes)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(x.flatten(1))


def vgg_tiny(**kwargs):
    return VGG(make_layers(cfgs["A"]), **kwargs)


def vgg_small(**kwargs):
    return VGG(make_layers(cfgs["B"]), **kwargs)
