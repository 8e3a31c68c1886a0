import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, in_dim, hidden, num_classes, act, temperature=1.0):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), act)
        self.head = nn.Linear(hidden, num_classes)
        self.temperature = temperature

    def forward(self, x):
        logits = self.head(self.body(x))
        logits.div_(self.temperature)
        return logits
