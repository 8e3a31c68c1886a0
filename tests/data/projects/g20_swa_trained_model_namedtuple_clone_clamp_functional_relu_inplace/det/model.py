from collections import namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

DetOutput = namedtuple("DetOutput", ["logits", "prob"])

ACT_KWARGS = dict(inplace=True)


class ObjectnessNet(nn.Module):
    def __init__(self, dim, act="relu"):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = getattr(F, act)
        self.cls = nn.Linear(dim, 1)

    def forward(self, x):
        h = self.act(self.fc(x), **ACT_KWARGS)
        logits = self.cls(h).squeeze(1)
        return DetOutput(logits=logits, prob=torch.sigmoid(logits))
