import copy

import torch


def average(models):
    avg = copy.deepcopy(models[0])
    with torch.no_grad():
        for name, p in avg.named_parameters():
            p.copy_(torch.stack([dict(m.named_parameters())[name] for m in models]).mean(0))
    return avg
