# source: https://github.com/jolibrain/joliGEN/pull/63 ("Two discriminators": a second, patch-level discriminator is added next to the global one; its D loss is fed the generated batch without .detach(), so the D backward frees the generator graph that the generator loss needs)
# family: E
# expect: ok
# line: 32  (backward: 46)
# fix: (fixed version of E102_gan_second_discriminator_fake_not_detached.py) feed the second discriminator a detached fake in the D loss: self.netD_patch(self.fake_B.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gan_loss(pred, target_is_real):
    target = torch.ones_like(pred) if target_is_real else torch.zeros_like(pred)
    return F.mse_loss(pred, target)


class TwoDiscriminatorGAN:
    def __init__(self, dim=24):
        self.netG = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, dim))
        self.netD_global = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.netD_patch = nn.Sequential(nn.Unflatten(1, (4, dim // 4)), nn.Linear(dim // 4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        d_params = list(self.netD_global.parameters()) + list(self.netD_patch.parameters())
        self.optimizer_D = torch.optim.Adam(d_params, lr=2e-4, betas=(0.5, 0.999))

    def forward(self, z):
        self.fake_B = self.netG(z)

    def compute_D_loss(self, real_B):
        loss_global = gan_loss(self.netD_global(real_B), True) + gan_loss(self.netD_global(self.fake_B.detach()), False)
        loss_patch = gan_loss(self.netD_patch(real_B), True) + gan_loss(self.netD_patch(self.fake_B.detach()), False)
        self.loss_D = 0.5 * (loss_global + loss_patch)

    def compute_G_loss(self):
        self.loss_G = gan_loss(self.netD_global(self.fake_B), True) + gan_loss(self.netD_patch(self.fake_B), True)

    def optimize_parameters(self, z, real_B):
        self.forward(z)
        self.optimizer_D.zero_grad()
        self.compute_D_loss(real_B)
        self.loss_D.backward()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.compute_G_loss()
        self.loss_G.backward()
        self.optimizer_G.step()


if __name__ == "__main__":
    model = TwoDiscriminatorGAN()
    for it in range(2):
        model.optimize_parameters(torch.randn(8, 8), torch.randn(8, 24))
        print("iter", it, "loss_D", model.loss_D.item(), "loss_G", model.loss_G.item())
