import torch


def l1_loss(pred, logvar, target):
    return (pred - target).abs().mean()


def charbonnier_loss(pred, logvar, target, eps=1e-3):
    return torch.sqrt((pred - target) ** 2 + eps * eps).mean()
