import torch.nn as nn


class _MLP(nn.Module):
    def __init__(self, hidden, feat_dim=8, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(12, hidden), nn.ReLU(), nn.Linear(hidden, feat_dim), nn.ReLU())
        self.fc = nn.Linear(feat_dim, num_classes)

    @classmethod
    def from_config(cls, cfg):
        return cls(cfg["hidden"])

    def forward(self, x):
        feat = self.body(x)
        return feat, self.fc(feat)


class Student(_MLP):
    pass


class Teacher(_MLP):
    pass
