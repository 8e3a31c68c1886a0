import functools

import torch

# the GAN optimizer of the DCGAN paper, bound once
make_adam = functools.partial(torch.optim.Adam, lr=2e-4, betas=(0.5, 0.999))
