from collections import namedtuple

import torch
import torch.nn as nn

DetOutput = namedtuple("DetOutput", ["logits", "prob"])


class ObjectnessNet(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())
        self.cls = nn.Linear(dim, 1)

    def forward(self, x):
        logits = self.cls(self.body(x)).squeeze(1)
        return DetOutput(logits=logits, prob=torch.sigmoid(logits))
