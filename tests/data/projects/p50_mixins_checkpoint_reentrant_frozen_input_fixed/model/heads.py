import torch.nn as nn


class ClassificationHeadMixin:
    def build_head(self, width, num_classes, dropout=0.0):
        self.head_drop = nn.Dropout(dropout)
        self.head = nn.Linear(width, num_classes)

    def forward_head(self, feats):
        return self.head(self.head_drop(feats))
