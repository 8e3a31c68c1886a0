import json

import torch

from gan.nets import Discriminator, Generator
from gan.steps import discriminator_step, generator_step

with open("configs/mnist_gan.json") as f:
    cfg = json.load(f)

torch.manual_seed(0)
G = Generator(cfg["z_dim"], cfg["img_dim"])
D = Discriminator(cfg["img_dim"])
opt_G = torch.optim.Adam(G.parameters(), lr=cfg["lr"], betas=(0.5, 0.999))
opt_D = torch.optim.Adam(D.parameters(), lr=cfg["lr"], betas=(0.5, 0.999))

for it in range(cfg["iters"]):
    real = torch.rand(cfg["batch_size"], cfg["img_dim"]) * 2 - 1
    fake = G(torch.randn(cfg["batch_size"], cfg["z_dim"]))
    loss_D, d_fake = discriminator_step(D, opt_D, real, fake)
    loss_G = generator_step(opt_G, d_fake)
    print(it, round(loss_D, 4), round(loss_G, 4))
