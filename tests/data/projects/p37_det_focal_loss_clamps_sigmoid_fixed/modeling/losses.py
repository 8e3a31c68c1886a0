import torch
import torch.nn as nn

from core.registry import LOSSES


def sigmoid_focal_weight(prob, target, gamma, eps=1e-6):
    prob = prob.clamp(min=eps, max=1 - eps)
    pt = torch.where(target == 1, prob, 1 - prob)
    return (1 - pt).pow(gamma), pt


@LOSSES.register
class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0, alpha=0.25):
        super().__init__()
        self.gamma, self.alpha = gamma, alpha

    def forward(self, logits, target):
        prob = logits.sigmoid()
        weight, pt = sigmoid_focal_weight(prob, target, self.gamma)
        alpha = torch.where(target == 1, self.alpha, 1 - self.alpha)
        return (-alpha * weight * pt.log()).sum() / max(1.0, float(target.sum()))
