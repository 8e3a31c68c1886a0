import torch
import torch.nn as nn


class GaussianDiffusion(nn.Module):
    def __init__(self, denoiser, schedule):
        super().__init__()
        self.denoiser = denoiser
        self.schedule = schedule

    def q_sample(self, x_start, gamma, noise):
        """x_t = alpha_t x_0 + sigma_t eps, with alpha_t^2 = sigmoid(-gamma), sigma_t^2 = sigmoid(gamma)."""
        alpha = torch.sigmoid(-gamma).sqrt_()
        sigma = torch.sigmoid(gamma).sqrt_()
        return alpha * x_start + sigma * noise

    def p_losses(self, x_start):
        t = torch.rand(x_start.shape[0], 1)
        gamma = self.schedule(t)
        noise = torch.randn_like(x_start)
        x_t = self.q_sample(x_start, gamma, noise)
        eps_hat = self.denoiser(torch.cat([x_t, t], dim=1))
        return ((eps_hat - noise) ** 2).mean()
