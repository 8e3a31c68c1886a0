# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix/issues/439 ("implementing wgangp for pix2pix ... Trying to backward through the graph a second time, even I only call backward once", D updated several times before G): the gradient penalty is computed on the undetached fake pair
# family: E
# expect: ok
# line: 39  (backward: 41)
# fix: (fixed version of E103_pix2pix_wgangp_penalty_on_undetached_fake.py) pass the detached fake pair to the gradient penalty: cal_gradient_penalty(self.netD, real_AB, fake_AB.detach())
import torch
import torch.nn as nn

torch.manual_seed(0)


def cal_gradient_penalty(netD, real_data, fake_data, lambda_gp=10.0):
    alpha = torch.rand(real_data.shape[0], 1).expand_as(real_data)
    interpolatesv = alpha * real_data + (1 - alpha) * fake_data
    interpolatesv.requires_grad_(True)
    disc_interpolates = netD(interpolatesv)
    gradients = torch.autograd.grad(outputs=disc_interpolates, inputs=interpolatesv,
                                    grad_outputs=torch.ones_like(disc_interpolates),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean() * lambda_gp


class Pix2PixWGANGP:
    def __init__(self, n_critic=3):
        self.netG = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 10))
        self.netD = nn.Sequential(nn.Linear(20, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
        self.n_critic = n_critic

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        pred_fake = self.netD(fake_AB.detach())
        real_AB = torch.cat((self.real_A, self.real_B), 1)
        pred_real = self.netD(real_AB)
        self.gradient_penalty = cal_gradient_penalty(self.netD, real_AB, fake_AB.detach())
        self.loss_D = pred_fake.mean() - pred_real.mean() + self.gradient_penalty
        self.loss_D.backward()

    def backward_G(self):
        fake_AB = torch.cat((self.real_A, self.fake_B), 1)
        self.loss_G = -self.netD(fake_AB).mean() + 10.0 * (self.fake_B - self.real_B).abs().mean()
        self.loss_G.backward()

    def optimize_parameters(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B
        self.forward()
        for _ in range(self.n_critic):
            self.optimizer_D.zero_grad()
            self.backward_D()
            self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


if __name__ == "__main__":
    model = Pix2PixWGANGP()
    for it in range(2):
        model.optimize_parameters(torch.randn(8, 10), torch.randn(8, 10))
        print("iter", it, "loss_D", model.loss_D.item(), "loss_G", model.loss_G.item())
