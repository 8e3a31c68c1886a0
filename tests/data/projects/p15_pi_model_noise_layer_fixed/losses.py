import torch.nn.functional as F


def pi_model_loss(logits_a, logits_b, labels, labelled, w):
    sup = F.cross_entropy(logits_a[labelled], labels[labelled])
    consistency = F.mse_loss(F.softmax(logits_a, 1), F.softmax(logits_b, 1))
    return sup + w * consistency
