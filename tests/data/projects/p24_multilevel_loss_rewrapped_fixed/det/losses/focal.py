import torch
import torch.nn.functional as F

from . import register_loss


@register_loss("sigmoid_focal")
class SigmoidFocalLoss:
    def __init__(self, alpha=0.25, gamma=2.0):
        self.alpha, self.gamma = alpha, gamma

    def __call__(self, logits, targets):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        a_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        return (a_t * ce * (1 - p_t) ** self.gamma).mean()
