import itertools

import torch

from models import networks
from util.image_pool import ImagePool


class CycleGANModel:
    def __init__(self, opt):
        self.netG_A, self.netG_B = networks.define_G(opt["ngf"]), networks.define_G(opt["ngf"])
        self.netD_A, self.netD_B = networks.define_D(opt["ndf"]), networks.define_D(opt["ndf"])
        self.fake_A_pool, self.fake_B_pool = ImagePool(opt["pool_size"]), ImagePool(opt["pool_size"])
        self.criterionGAN = networks.GANLoss()
        self.criterionCycle = torch.nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(itertools.chain(self.netG_A.parameters(), self.netG_B.parameters()),
                                            lr=opt["lr"], betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()),
                                            lr=opt["lr"], betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG_A(self.real_A)
        self.rec_A = self.netG_B(self.fake_B)
        self.fake_A = self.netG_B(self.real_B)
        self.rec_B = self.netG_A(self.fake_A)

    @staticmethod
    def set_requires_grad(nets, requires_grad):
        for net in nets:
            for param in net.parameters():
                param.requires_grad = requires_grad

    def backward_D_basic(self, netD, real, fake):
        loss_D = (self.criterionGAN(netD(real), True) + self.criterionGAN(netD(fake.detach()), False)) * 0.5
        loss_D.backward()
        return loss_D

    def backward_G(self):
        self.loss_G = (self.criterionGAN(self.netD_A(self.fake_B), True)
                       + self.criterionGAN(self.netD_B(self.fake_A), True)
                       + 10.0 * self.criterionCycle(self.rec_A, self.real_A)
                       + 10.0 * self.criterionCycle(self.rec_B, self.real_B))
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad([self.netD_A, self.netD_B], False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()
        self.set_requires_grad([self.netD_A, self.netD_B], True)
        self.optimizer_D.zero_grad()
        self.backward_D_basic(self.netD_A, self.real_B, self.fake_B_pool.query(self.fake_B))
        self.backward_D_basic(self.netD_B, self.real_A, self.fake_A_pool.query(self.fake_A))
        self.optimizer_D.step()
