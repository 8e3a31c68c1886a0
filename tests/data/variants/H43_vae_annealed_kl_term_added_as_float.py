# source: the VAE objective of https://github.com/pytorch/examples/issues/824 (loss = BCE + KLD, KLD = -0.5 * sum(1 + logvar - mu^2 - exp(logvar))) with a KL warm-up: the annealed term is built with float(kld) (to log it and to multiply by the schedule), so the KL term adds a constant and the encoder is never pulled towards the prior
# family: H
# expect: silent
# verify: the encoder's gradients are compared with autograd's gradients of the same annealed ELBO written with tensors
# line: 45  (backward: 57)
# fix: keep the KL term a tensor: loss = recon + beta * kld (log float(kld) separately)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class VAE(nn.Module):
    def __init__(self, din=12, hidden=16, latent=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(din, hidden), nn.Tanh())
        self.mu = nn.Linear(hidden, latent)
        self.logvar = nn.Linear(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.Tanh(), nn.Linear(hidden, din))

    def forward(self, x, eps):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        return self.dec(z), mu, logvar


def kl_divergence(mu, logvar):
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / mu.size(0)


class KLSchedule:
    def __init__(self, warmup_steps):
        self.warmup_steps = warmup_steps

    def beta(self, step):
        return min(1.0, (step + 1) / self.warmup_steps)


def elbo_loss(model, x, eps, beta, history):
    recon, mu, logvar = model(x, eps)
    rec = F.mse_loss(recon, x, reduction="sum") / x.size(0)
    kld = kl_divergence(mu, logvar)
    kl_term = beta * float(kld)
    history.append((rec.item(), float(kld)))
    return rec + kl_term


if __name__ == "__main__":
    model, schedule, history = VAE(), KLSchedule(warmup_steps=4), []
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(4):
        x, eps = torch.randn(16, 12), torch.randn(16, 3)
        loss = elbo_loss(model, x, eps, schedule.beta(step), history)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "recon %.3f kl %.3f" % history[-1])

    x, eps, beta = torch.randn(16, 12), torch.randn(16, 3), schedule.beta(3)
    watched = [model.mu.weight, model.logvar.weight]
    got = torch.autograd.grad(elbo_loss(model, x, eps, beta, history), watched)
    recon, mu, logvar = model(x, eps)
    ref_loss = F.mse_loss(recon, x, reduction="sum") / x.size(0) + beta * kl_divergence(mu, logvar)
    ref = torch.autograd.grad(ref_loss, watched)
    if all(torch.allclose(g, r, atol=1e-5) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the KL term does not reach the encoder; logvar-head gradient off by",
              (got[1] - ref[1]).abs().max().item())
