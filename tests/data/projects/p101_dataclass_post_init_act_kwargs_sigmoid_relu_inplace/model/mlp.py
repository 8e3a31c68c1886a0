import torch.nn as nn


class GatedMLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        layers = []
        d = cfg.in_dim
        for w in cfg.widths:
            layers += [nn.Linear(d, w), nn.Sigmoid(), nn.ReLU(**cfg.act_kwargs)]
            d = w
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(d, 1)

    def forward(self, x):
        return self.head(self.body(x))
