# source: https://github.com/TencentYoutuResearch/Adv-Makeup/issues/25 ("when updating the discriminator, fake images are not detached from the generator network") and https://github.com/geekyutao/RN/pull/19 (inplace-operation error from the discriminator/generator update order); here the generator is updated first and the discriminator loss then reuses the undetached fake batch
# family: E
# expect: ok
# line: 26, 27  (backward: 30)
# fix: (fixed version of E106_generator_step_first_then_d_loss_on_undetached_fake.py) the discriminator loss must not reach the generator that was just stepped: self.netD(fake.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
    netD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
    opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    bce = nn.BCEWithLogitsLoss()
    for it in range(2):
        real = torch.randn(8, 16).tanh()
        fake = netG(torch.randn(8, 8))
        pred_fake = netD(fake)
        g_loss = bce(pred_fake, torch.ones_like(pred_fake))
        opt_g.zero_grad()
        g_loss.backward(retain_graph=True)
        opt_g.step()
        d_real, d_fake = netD(real), netD(fake.detach())
        d_loss = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        print("iter", it, "g_loss", g_loss.item(), "d_loss", d_loss.item())
