# source: https://github.com/caogang/wgan-gp/issues/28 ("grad_outputs for gradient penalty": why torch.ones must be passed as grad_outputs; the critic's output on the interpolates is one score per sample) and https://github.com/kuc2477/pytorch-wgan-gp/issues/1
# family: H
# expect: ok
# line: 34
# fix: (fixed version of H61_wgan_gp_penalty_grad_without_grad_outputs.py) pass the vector the per-sample scores are contracted with: torch.autograd.grad(d_interp, interp, grad_outputs=torch.ones_like(d_interp), create_graph=True)
import torch
import torch.nn as nn

torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self, din=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(din, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class Generator(nn.Module):
    def __init__(self, zdim=4, dout=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(zdim, 32), nn.ReLU(), nn.Linear(32, dout))

    def forward(self, z):
        return self.net(z)


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = critic(interp)
    grads = torch.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=torch.ones_like(d_interp),
                                create_graph=True, retain_graph=True)[0]
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


if __name__ == "__main__":
    critic, gen = Critic(), Generator()
    opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for it in range(3):
        real = torch.randn(16, 8)
        fake = gen(torch.randn(16, 4)).detach()
        d_loss = critic(fake).mean() - critic(real).mean() + 10.0 * gradient_penalty(critic, real, fake)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        print("iter", it, "d_loss", round(d_loss.item(), 4))
