import torch
import torch.nn as nn


class BinaryFocalLoss(nn.Module):
    def __init__(self, gamma=2.0, eps=1e-4):
        super().__init__()
        self.gamma = gamma
        self.eps = eps

    def forward(self, out, target):
        p = out.prob
        p.clamp_(self.eps, 1 - self.eps)
        pt = torch.where(target > 0, p, 1 - p)
        return (-(1 - pt) ** self.gamma * torch.log(pt)).mean()
