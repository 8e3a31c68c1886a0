import torch
import torch.nn as nn


def linear_beta_schedule(timesteps):
    betas = torch.linspace(1e-4, 0.02, timesteps)
    return betas


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=50):
        super().__init__()
        self.model = model
        self.num_timesteps = timesteps
        betas = linear_beta_schedule(timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        sqrt_ac = alphas_cumprod.clone().sqrt_()
        sqrt_1m_ac = (1.0 - alphas_cumprod).sqrt_()
        self.register_buffer("sqrt_alphas_cumprod", sqrt_ac)
        self.register_buffer("sqrt_one_minus_alphas_cumprod", sqrt_1m_ac)

    def q_sample(self, x_start, t, noise):
        a = self.sqrt_alphas_cumprod[t].unsqueeze(1)
        s = self.sqrt_one_minus_alphas_cumprod[t].unsqueeze(1)
        return a * x_start + s * noise

    def p_losses(self, x_start):
        t = torch.randint(0, self.num_timesteps, (x_start.shape[0],))
        noise = torch.randn_like(x_start)
        x_t = self.q_sample(x_start, t, noise)
        t_in = t.float().unsqueeze(1) / self.num_timesteps
        pred = self.model(torch.cat([x_t, t_in], dim=1))
        return (pred - noise).pow(2).mean()

    @torch.no_grad()
    def sample(self, n, dim):
        x = torch.randn(n, dim)
        for i in reversed(range(0, self.num_timesteps, 10)):
            t_in = torch.full((n, 1), i / self.num_timesteps)
            eps = self.model(torch.cat([x, t_in], dim=1))
            x.sub_(0.1 * eps).clamp_(-1.0, 1.0)
        return x
