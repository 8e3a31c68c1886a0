# source: WGAN training loops that compute the generator loss (for logging) at the top of the iteration and backpropagate it after the n_critic RMSprop steps of the critic
# family: E
# expect: ok
# line: 19  (backward: 24)
# fix: (fixed version of E36_wgan_generator_loss_before_critic_loop.py) compute errG = -netD(netG(z)).mean() after the critic loop (fresh forward through the updated critic)
import torch
import torch.nn as nn

torch.manual_seed(0)


def train_iteration(netG, netD, optD, optG, real, nz=4, n_critic=3, clip=0.01):
    z = torch.randn(real.size(0), nz)
    fake = netG(z)
    for _ in range(n_critic):
        optD.zero_grad()
        errD = netD(fake.detach()).mean() - netD(real).mean()
        errD.backward()
        optD.step()
        for p in netD.parameters():
            p.data.clamp_(-clip, clip)
    errG = -netD(fake).mean()
    optG.zero_grad()
    errG.backward()
    optG.step()
    return errD.item(), errG.item()


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
    optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
    print(train_iteration(netG, netD, optD, optG, torch.randn(8, 8)))
