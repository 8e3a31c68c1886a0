# source: https://github.com/meta-pytorch/torchforge/pull/71 ("Fixing a dumb bug where we weren't zeroing grad on optimizers after each step") in a two-optimizer GAN loop where the generator step clears the discriminator's optimizer by copy-paste
# family: H
# expect: silent
# verify: the generator after training is compared with the same loop that clears the generator's gradients every step
# line: 35
# fix: clear the generator's gradients before its backward: opt_g.zero_grad()
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def train(netG, netD, steps, zero_g):
    opt_g = torch.optim.SGD(netG.parameters(), lr=0.05)
    opt_d = torch.optim.SGD(netD.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1)
    for _ in range(steps):
        real, z = torch.randn(8, 4, generator=gen), torch.randn(8, 2, generator=gen)
        fake = netG(z)
        d_loss = F.softplus(-netD(real)).mean() + F.softplus(netD(fake.detach())).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = F.softplus(-netD(fake)).mean()
        zero_g(opt_g, opt_d)
        g_loss.backward()
        opt_g.step()
    return netG


def clear_before_g_step(opt_g, opt_d):
    opt_d.zero_grad()


if __name__ == "__main__":
    netG, netD = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4)), nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
    refG, refD = copy.deepcopy(netG), copy.deepcopy(netD)
    train(netG, netD, 3, clear_before_g_step)
    train(refG, refD, 3, lambda og, od: (og.zero_grad(), od.zero_grad()))
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(netG.parameters(), refG.parameters()))
    print("MATCH" if ok else "MISMATCH: the generator's gradients accumulated across steps")
