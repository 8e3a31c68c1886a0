import torch
import torch.nn.functional as F


def ce_loss(out, aux, y):
    return F.cross_entropy(out.reshape(-1, out.size(-1)), y)


def zero_reg(out, aux, y):
    scale = torch.exp(out.mean()).clamp(max=10.0)
    return 0.0 * scale
