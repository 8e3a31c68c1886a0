# source: https://github.com/rosinality/stylegan2-pytorch/issues/32 (g_path_regularize: torch.autograd.grad on the latents without create_graph=True; here the path-length penalty is added to the same step's generator loss, whose backward then reaches the synthesis graph that autograd.grad freed)
# family: D
# expect: ok
# line: 32  (backward: 49)
# fix: (fixed version of D106_stylegan2_path_length_grad_without_create_graph.py) build the double-backward graph: autograd.grad(..., create_graph=True) (this also keeps the graph for the generator loss)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


class Generator(nn.Module):
    def __init__(self, z_dim=16, n_latent=4, size=8):
        super().__init__()
        self.n_latent, self.size = n_latent, size
        self.mapping = nn.Sequential(nn.Linear(z_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, z_dim))
        self.synthesis = nn.Sequential(nn.Linear(n_latent * z_dim, 64), nn.LeakyReLU(0.2), nn.Linear(64, size * size))

    def forward(self, z):
        w = self.mapping(z)
        latents = w.unsqueeze(1).repeat(1, self.n_latent, 1)
        img = torch.tanh(self.synthesis(latents.flatten(1))).view(-1, 1, self.size, self.size)
        return img, latents


def g_path_regularize(fake_img, latents, mean_path_length, decay=0.01):
    noise = torch.randn_like(fake_img) / math.sqrt(fake_img.shape[2] * fake_img.shape[3])
    (grad,) = autograd.grad((fake_img * noise).sum(), latents, create_graph=True)
    path_lengths = torch.sqrt(grad.pow(2).sum(2).mean(1))
    path_mean = mean_path_length + decay * (path_lengths.mean() - mean_path_length)
    path_penalty = (path_lengths - path_mean).pow(2).mean()
    return path_penalty, path_mean.detach(), path_lengths


if __name__ == "__main__":
    generator = Generator()
    discriminator = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    g_optim = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
    mean_path_length = 0.0
    for step in range(2):
        fake_img, latents = generator(torch.randn(8, 16))
        g_loss = F.softplus(-discriminator(fake_img)).mean()
        path_loss, mean_path_length, _ = g_path_regularize(fake_img, latents, mean_path_length)
        generator.zero_grad()
        (g_loss + 2.0 * path_loss).backward()
        g_optim.step()
        print("step", step, "g_loss", g_loss.item(), "path", path_loss.item())
