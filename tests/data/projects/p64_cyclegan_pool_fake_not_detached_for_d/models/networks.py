import torch.nn as nn


def define_G(nc=3, ngf=8):
    return nn.Sequential(nn.Conv2d(nc, ngf, 1), nn.ReLU(), nn.Conv2d(ngf, nc, 1), nn.Tanh())


def define_D(nc=3, ndf=8):
    return nn.Sequential(nn.Conv2d(nc, ndf, 1), nn.LeakyReLU(0.2), nn.Conv2d(ndf, 1, 1))
