import torch
import torch.nn as nn


class BinaryDiceLoss(nn.Module):
    def __init__(self, smooth=1.0, ignore_index=255):
        super().__init__()
        self.smooth = smooth
        self.ignore_index = ignore_index

    def forward(self, logits, target):
        probs = torch.sigmoid(logits)
        valid = target != self.ignore_index
        probs[~valid] = 0
        target = torch.where(valid, target, torch.zeros_like(target)).float()
        inter = (probs * target).flatten(1).sum(1)
        union = probs.flatten(1).sum(1) + target.flatten(1).sum(1)
        return (1 - (2 * inter + self.smooth) / (union + self.smooth)).mean()


class DiceLoss(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.binary = BinaryDiceLoss(**kwargs)

    def forward(self, logits, target):
        return sum(self.binary(logits[:, c], target[:, c]) for c in range(logits.size(1))) / logits.size(1)
