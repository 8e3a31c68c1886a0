import torch.nn as nn
import torch.nn.functional as F

TASK_CRITERIA = {
    "semseg": F.cross_entropy,
    "depth": F.l1_loss,
    "normals": lambda pred, target: (1 - F.cosine_similarity(pred, target, dim=1)).mean(),
}


class MultiTaskLoss(nn.Module):
    def __init__(self, loss_weights):
        super().__init__()
        self.loss_weights = loss_weights

    def forward(self, outputs, targets):
        losses = {task: TASK_CRITERIA[task](outputs[task], targets[task]) for task in self.loss_weights}
        total = sum(self.loss_weights[task] * losses[task] for task in self.loss_weights)
        return total, losses
