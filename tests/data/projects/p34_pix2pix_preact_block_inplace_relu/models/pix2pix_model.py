import torch
import torch.nn as nn

from . import networks


class Pix2PixModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG = networks.define_G(opt)
        self.netD = networks.define_D(opt)
        self.criterionGAN = nn.MSELoss()
        self.criterionL1 = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(0.5, 0.999))

    def set_input(self, data):
        self.real_A, self.real_B = data

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1).detach())
        pred_real = self.netD(torch.cat((self.real_A, self.real_B), 1))
        loss_D = 0.5 * (self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
                        + self.criterionGAN(pred_real, torch.ones_like(pred_real)))
        loss_D.backward()

    def backward_G(self):
        pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
        loss_G = self.criterionGAN(pred_fake, torch.ones_like(pred_fake)) \
            + self.criterionL1(self.fake_B, self.real_B) * self.opt.lambda_L1
        loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
