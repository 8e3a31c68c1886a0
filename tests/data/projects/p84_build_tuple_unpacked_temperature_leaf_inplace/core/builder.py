import torch
import torch.nn as nn


class ScaledClassifier(nn.Module):
    def __init__(self, dim, n_classes):
        super().__init__()
        self.fc = nn.Linear(dim, n_classes)
        self.temperature = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return self.fc(x) / self.temperature


def build(cfg):
    model = ScaledClassifier(**cfg["model"])
    criterion = nn.CrossEntropyLoss()
    opt_cls = getattr(torch.optim, cfg["optim"]["name"])
    optimizer = opt_cls(model.parameters(), lr=cfg["optim"]["lr"])
    return model, criterion, optimizer
