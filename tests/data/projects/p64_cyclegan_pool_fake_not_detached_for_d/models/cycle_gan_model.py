import itertools

import torch
import torch.nn as nn

from util.image_pool import ImagePool

from . import networks


class CycleGANModel:
    def __init__(self, opt):
        self.opt = opt
        self.netG_A, self.netG_B = networks.define_G(), networks.define_G()
        self.netD_A, self.netD_B = networks.define_D(), networks.define_D()
        self.fake_A_pool = ImagePool(opt.pool_size)
        self.fake_B_pool = ImagePool(opt.pool_size)
        self.criterionGAN = nn.MSELoss()
        self.criterionCycle = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(
            itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()), lr=opt.lr, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(
            itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()), lr=opt.lr, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    def gan_loss(self, pred, is_real):
        return self.criterionGAN(pred, torch.full_like(pred, 1.0 if is_real else 0.0))

    def backward_D_basic(self, netD, real, fake):
        loss_D_real = self.gan_loss(netD(real), True)
        loss_D_fake = self.gan_loss(netD(fake), False)
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def backward_D_A(self):
        fake_B = self.fake_B_pool.query(self.fake_B)
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, fake_B)

    def backward_D_B(self):
        fake_A = self.fake_A_pool.query(self.fake_A)
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, fake_A)

    def backward_G(self):
        lam = self.opt.lambda_A
        loss_G_A = self.gan_loss(self.netD_A(self.fake_B), True)
        loss_G_B = self.gan_loss(self.netD_B(self.fake_A), True)
        loss_cycle = self.criterionCycle(self.rec_A, self.real_A) * lam + self.criterionCycle(self.rec_B, self.real_B) * lam
        self.loss_G = loss_G_A + loss_G_B + loss_cycle
        self.loss_G.backward()

    def set_requires_grad(self, nets, requires_grad):
        for net in nets:
            for p in net.parameters():
                p.requires_grad = requires_grad

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad([self.netD_A, self.netD_B], False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.set_requires_grad([self.netD_A, self.netD_B], True)
        self.optimizer_D.zero_grad()
        self.backward_D_A()
        self.backward_D_B()
        self.optimizer_D.step()
