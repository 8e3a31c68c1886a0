# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/1306 ("first backward discriminators and then backward generators is more reasonable, though it doesn't matter" - "Both could work"): the generator is stepped first and the discriminator then sees the same fake batch detached
# family: G
# expect: ok
# line: 27
# fix: none needed - the discriminator loss uses fake.detach(), so it never reaches the generator that was just stepped
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    netD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g, opt_d = torch.optim.Adam(netG.parameters(), lr=2e-4), torch.optim.Adam(netD.parameters(), lr=2e-4)
    for it in range(2):
        real = torch.randn(8, 16).tanh()
        fake = netG(torch.randn(8, 8))
        pred = netD(fake)
        g_loss = F.binary_cross_entropy_with_logits(pred, torch.ones_like(pred))
        netD.requires_grad_(False)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        netD.requires_grad_(True)
        d_real, d_fake = netD(real), netD(fake.detach())
        d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) \
            + F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        print("iter", it, "g", g_loss.item(), "d", d_loss.item())
