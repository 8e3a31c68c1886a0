import torch.nn as nn

from .blocks import make_layers

__all__ = ["VGG", "vgg_small_bn"]


class VGG(nn.Module):
    def __init__(self, features, num_classes=10):
        super().__init__()
        self.features = features
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16 * 2 * 2, num_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def vgg_small_bn(**kwargs):
    return VGG(make_layers([8, "T", "M", 16, "M"]), **kwargs)
