import torch.nn.functional as F


def temporal_loss(logits, ensemble_targets, labels, labelled, weight):
    sup = F.cross_entropy(logits[labelled], labels[labelled]) if labelled.any() else logits.sum() * 0
    unsup = F.mse_loss(F.softmax(logits, dim=1), ensemble_targets)
    return sup + weight * unsup
