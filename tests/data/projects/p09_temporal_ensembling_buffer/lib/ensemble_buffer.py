"""Ensemble predictions Z (Laine & Aila, temporal ensembling), kept across epochs."""
import torch
import torch.nn.functional as F


class EnsembleBuffer:
    def __init__(self, n_samples, n_classes, alpha=0.6):
        self.alpha = alpha
        self.Z = torch.zeros(n_samples, n_classes)
        self.targets = torch.zeros(n_samples, n_classes)

    def update(self, idx, logits, epoch):
        self.Z[idx] = self.alpha * self.Z[idx] + (1 - self.alpha) * F.softmax(logits, dim=1)
        self.targets[idx] = self.Z[idx] / (1 - self.alpha ** (epoch + 1))
