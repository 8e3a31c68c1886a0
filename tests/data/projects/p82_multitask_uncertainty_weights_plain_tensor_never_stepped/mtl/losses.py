import torch
import torch.nn as nn
import torch.nn.functional as F

from tasks import TASKS

CRITERIA = {
    "segment": F.cross_entropy,
    "depth": F.l1_loss,
    "edges": F.binary_cross_entropy_with_logits,
}


class UncertaintyWeightedLoss(nn.Module):
    """Kendall et al.: loss = sum_t exp(-s_t) * L_t + s_t, with s_t = log sigma_t^2 learned."""

    def __init__(self):
        super().__init__()
        self.log_vars = torch.zeros(len(TASKS), requires_grad=True)

    def forward(self, preds, targets):
        total = 0.0
        for i, t in enumerate(TASKS):
            total = total + torch.exp(-self.log_vars[i]) * CRITERIA[t](preds[t], targets[t]) + self.log_vars[i]
        return total
