import functools

import torch

LatentAdam = functools.partial(torch.optim.Adam, lr=0.05, betas=(0.9, 0.999))
