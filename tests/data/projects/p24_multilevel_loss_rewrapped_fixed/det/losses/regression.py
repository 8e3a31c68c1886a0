import torch
import torch.nn.functional as F

from . import register_loss


@register_loss("multi_level_l1")
class MultiLevelL1:
    """Mean over pyramid levels of the L1 box loss of each level."""

    def __init__(self, beta=1.0 / 9):
        self.beta = beta

    def __call__(self, preds, targets):
        per_level = [F.smooth_l1_loss(p, t, beta=self.beta) for p, t in zip(preds, targets)]
        return torch.stack(per_level).mean()
