# source: caogang/wgan-gp (gan_toy.py) critic step in the original style: D_real.backward(mone); D_fake.backward(one); gradient_penalty.backward() - three backward calls on three separate critic forwards, the fake batch detached from the generator
# family: G
# expect: ok
# line: 39
# fix: none needed - every backward call has its own graph (the penalty's graph is built with create_graph=True), nothing is freed twice
import torch
import torch.nn as nn
from torch import autograd

torch.manual_seed(0)


def calc_gradient_penalty(netD, real_data, fake_data, lam=10.0):
    alpha = torch.rand(real_data.size(0), 1).expand(real_data.size())
    interpolates = (alpha * real_data + (1 - alpha) * fake_data).requires_grad_(True)
    disc_interpolates = netD(interpolates)
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones_like(disc_interpolates),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lam


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 2))
    netD = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 1))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
    one = torch.tensor(1.0)
    mone = one * -1
    for critic_iter in range(3):
        real_data = torch.randn(16, 2)
        netD.zero_grad()
        D_real = netD(real_data).mean()
        D_real.backward(mone)
        with torch.no_grad():
            fake = netG(torch.randn(16, 2))
        D_fake = netD(fake).mean()
        D_fake.backward(one)
        gradient_penalty = calc_gradient_penalty(netD, real_data, fake)
        gradient_penalty.backward()
        optimizerD.step()
        print("critic iter", critic_iter, "W", (D_real - D_fake).item())
