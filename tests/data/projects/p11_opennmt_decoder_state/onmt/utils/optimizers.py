import torch

OPTIMIZERS = {"sgd": "SGD", "adam": "Adam", "adagrad": "Adagrad"}


def build_torch_optimizer(model, opt):
    cls = getattr(torch.optim, OPTIMIZERS[opt["optim"]])
    return cls([p for p in model.parameters() if p.requires_grad], lr=opt["learning_rate"])
