import torch


def make_optimizer(params, name="RMSprop", lr=7e-4):
    return getattr(torch.optim, name)(params, lr=lr)
