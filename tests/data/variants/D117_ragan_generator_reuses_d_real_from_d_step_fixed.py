# source: https://github.com/Zhaoyi-Yan/Shift-Net_pytorch/issues/34 ("re_avg_gan is broken": the relativistic-average generator loss reuses the discriminator's prediction on real images stored during backward_D, whose graph that backward freed)
# family: D
# expect: ok
# line: 37, 38  (backward: 40)
# fix: (fixed version of D117_ragan_generator_reuses_d_real_from_d_step.py) the real prediction only enters the generator loss as a constant: use self.pred_real.detach() (or run netD(real_B) again in backward_G)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ShiftNetModel:
    def __init__(self):
        self.netG = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
        self.netD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4)
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4)

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        self.pred_fake = self.netD(self.fake_B.detach())
        self.pred_real = self.netD(self.real_B)
        ones, zeros = torch.ones_like(self.pred_real), torch.zeros_like(self.pred_real)
        self.loss_D = (F.binary_cross_entropy_with_logits(self.pred_real - self.pred_fake.mean(), ones)
                       + F.binary_cross_entropy_with_logits(self.pred_fake - self.pred_real.mean(), zeros)) / 2
        self.loss_D.backward()

    def backward_G(self):
        pred_fake = self.netD(self.fake_B)
        ones, zeros = torch.ones_like(pred_fake), torch.zeros_like(pred_fake)
        self.loss_G_GAN = (F.binary_cross_entropy_with_logits(self.pred_real.detach() - pred_fake.mean(), zeros)
                           + F.binary_cross_entropy_with_logits(pred_fake - self.pred_real.detach().mean(), ones)) / 2
        self.loss_G = self.loss_G_GAN + F.l1_loss(self.fake_B, self.real_B)
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


if __name__ == "__main__":
    model = ShiftNetModel()
    for it in range(2):
        model.set_input(torch.randn(8, 16), torch.randn(8, 16))
        model.optimize_parameters()
        print("iter", it, "loss_D", model.loss_D.item(), "loss_G", model.loss_G.item())
