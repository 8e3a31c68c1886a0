"""WGAN-GP on a toy 2-D distribution: n_critic critic steps per generator step."""
import argparse

import torch

from losses import compute_gradient_penalty, critic_loss, generator_loss
from models.dcgan import Critic, Generator

parser = argparse.ArgumentParser()
parser.add_argument("--n_iters", type=int, default=3)
parser.add_argument("--n_critic", type=int, default=2)
parser.add_argument("--lambda_gp", type=float, default=10.0)
parser.add_argument("--latent_dim", type=int, default=4)
opt = parser.parse_args()


def sample_real(n):
    return torch.randn(n, 2) * 0.5 + torch.tensor([1.0, -1.0])


def reference_critic_grads(critic, real, fake, rng_state):
    # the critic loss as the paper defines it: the penalty is a function of the critic's weights
    torch.set_rng_state(rng_state)
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    g = torch.autograd.grad(out, interp, torch.ones_like(out), create_graph=True)[0]
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    loss = critic_loss(critic(real), critic(fake)) + opt.lambda_gp * penalty
    return torch.autograd.grad(loss, list(critic.parameters()))


if __name__ == "__main__":
    torch.manual_seed(0)
    generator, critic = Generator(opt.latent_dim, 2), Critic(2)
    opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.9))
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    checked = False
    for it in range(opt.n_iters):
        for _ in range(opt.n_critic):
            real = sample_real(16)
            fake = generator(torch.randn(16, opt.latent_dim)).detach()
            rng_state = torch.get_rng_state()
            opt_d.zero_grad()
            gp = compute_gradient_penalty(critic, real, fake)
            d_loss = critic_loss(critic(real), critic(fake)) + opt.lambda_gp * gp
            d_loss.backward()
            if not checked:
                ref = reference_critic_grads(critic, real, fake, rng_state)
                same = all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(critic.parameters(), ref))
                print("MATCH" if same else "MISMATCH: the gradient penalty never reaches the critic's weights")
                checked = True
            opt_d.step()
        opt_g.zero_grad()
        g_loss = generator_loss(critic(generator(torch.randn(16, opt.latent_dim))))
        g_loss.backward()
        opt_g.step()
        print(it, round(d_loss.item(), 4), round(gp.item(), 4), round(g_loss.item(), 4))
