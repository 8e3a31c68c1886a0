import torch.nn as nn

from .backbone import BackboneMixin
from .heads import ClassificationHeadMixin


class Classifier(BackboneMixin, ClassificationHeadMixin, nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.build_backbone(cfg["in_dim"], cfg["width"], cfg["depth"], cfg["grad_checkpointing"])
        self.build_head(cfg["width"], cfg["num_classes"])

    def forward(self, x):
        return self.forward_head(self.forward_features(x))
