# source: StyleGAN-style R1 regularisation re-implemented with torch.autograd.grad(d_real.sum(), real) but without create_graph=True; autograd.grad frees the discriminator's graph on the real batch, and the total discriminator loss then backpropagates through it
# family: D
# expect: ok
# line: 21  (backward: 25)
# fix: (fixed version of D65_r1_penalty_autograd_grad_without_create_graph.py) keep (and differentiate) the graph: torch.autograd.grad(d_real.sum(), real, create_graph=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

Z, X = 8, 12


def discriminator_step(D, G, opt_d, real, gamma=10.0):
    real = real.detach().requires_grad_(True)
    d_real = D(real)
    with torch.no_grad():
        fake = G(torch.randn(real.size(0), Z))
    d_fake = D(fake)
    grad_real, = torch.autograd.grad(d_real.sum(), real, create_graph=True)
    r1 = grad_real.pow(2).sum(1).mean()
    loss = F.softplus(d_fake).mean() + F.softplus(-d_real).mean() + 0.5 * gamma * r1
    opt_d.zero_grad()
    loss.backward()
    opt_d.step()
    return loss.item()


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(Z, 32), nn.ReLU(), nn.Linear(32, X))
    D = nn.Sequential(nn.Linear(X, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.0, 0.99))
    for it in range(2):
        print("d loss", discriminator_step(D, G, opt_d, torch.randn(16, X)))
