import torch
import torch.nn as nn


class ResnetBlock(nn.Module):
    """Pre-activation residual block: act -> conv -> norm, with a projected shortcut."""

    def __init__(self, dim):
        super().__init__()
        self.shortcut = nn.Conv2d(dim, dim, 1)
        self.act = nn.ReLU(inplace=False)
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)
        self.norm = nn.BatchNorm2d(dim)

    def forward(self, x):
        s = self.shortcut(x)
        out = self.norm(self.conv(self.act(x)))
        return s + out


class ResnetGenerator(nn.Module):
    def __init__(self, input_nc, output_nc, ngf, n_blocks):
        super().__init__()
        model = [nn.Conv2d(input_nc, ngf, 3, padding=1), nn.BatchNorm2d(ngf)]
        model += [ResnetBlock(ngf) for _ in range(n_blocks)]
        model += [nn.Conv2d(ngf, output_nc, 3, padding=1), nn.Tanh()]
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x)


class NLayerDiscriminator(nn.Module):
    def __init__(self, input_nc, ndf):
        super().__init__()
        self.model = nn.Sequential(
            nn.Conv2d(input_nc, ndf, 4, 2, 1), nn.LeakyReLU(0.2, True), nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, x):
        return self.model(x)


def define_G(opt):
    return ResnetGenerator(3, 3, opt.ngf, opt.n_blocks)


def define_D(opt):
    return NLayerDiscriminator(6, opt.ngf)
