import random

import torch

from models import create_model

OPT = {"model": "cycle_gan", "ngf": 4, "ndf": 4, "pool_size": 3, "lr": 2e-4}

if __name__ == "__main__":
    torch.manual_seed(0)
    random.seed(0)
    model = create_model(OPT)
    for i in range(3):
        model.set_input(torch.rand(2, 3, 8, 8) * 2 - 1, torch.rand(2, 3, 8, 8) * 2 - 1)
        model.optimize_parameters()
        print(f"iter {i}: loss_G {model.loss_G.item():.4f}")
