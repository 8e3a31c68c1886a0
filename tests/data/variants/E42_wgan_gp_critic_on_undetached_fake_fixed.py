# source: WGAN-GP critic updates in the original style (D_real.backward(mone); D_fake.backward(one); gradient_penalty.backward()) where the fake batch was not detached from the generator (the original code used netG(noise).data)
# family: E
# expect: ok
# line: 34, 35  (backward: 38)
# fix: (fixed version of E42_wgan_gp_critic_on_undetached_fake.py) detach the generator output for the critic step: fake = netG(noise).detach()
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


def calc_gradient_penalty(netD, real_data, fake_data, lam=10.0):
    alpha = torch.rand(real_data.size(0), 1).expand_as(real_data)
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(disc_interpolates),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lam


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
    one = torch.tensor(1.0)
    mone = one * -1
    for iter_d in range(2):
        real = torch.randn(8, 8)
        netD.zero_grad()
        D_real = netD(real).mean()
        D_real.backward(mone)
        fake = netG(torch.randn(8, 4)).detach()
        D_fake = netD(fake).mean()
        D_fake.backward(one)
        gradient_penalty = calc_gradient_penalty(netD, real, fake)
        gradient_penalty.backward()
        optimizerD.step()
    print("D cost", (D_fake - D_real + gradient_penalty).item())
