import torch


def gaussian_nll_loss(pred, logvar, target, min_var=1e-6):
    var = torch.exp(logvar)
    var.clamp_(min=min_var)
    return (0.5 * (torch.log(var) + (pred - target) ** 2 / var)).mean()
