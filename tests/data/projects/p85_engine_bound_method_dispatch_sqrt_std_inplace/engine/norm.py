import torch


def standardize(h, eps=1e-5):
    mean = h.mean(0, keepdim=True)
    var = ((h - mean) ** 2).mean(0, keepdim=True)
    std = torch.sqrt(var)
    std += eps
    return (h - mean) / std
