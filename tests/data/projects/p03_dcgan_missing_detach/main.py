import torch
import torch.nn as nn

from models import build_models
from models.dcgan import weights_init
from trainer import d_step, g_step


def main(nz=8, batch=6, iters=2):
    torch.manual_seed(0)
    netG, netD = build_models("dcgan", nz, ngf=4, ndf=4)
    netG.apply(weights_init)
    netD.apply(weights_init)
    criterion = nn.BCELoss()
    opt_d = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_g = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    for i in range(iters):
        real = torch.rand(batch, 1, 8, 8) * 2 - 1
        noise = torch.randn(batch, nz, 1, 1)
        fake = netG(noise)
        err_d = d_step(netD, real, fake, opt_d, criterion)
        err_g = g_step(netG, netD, fake, opt_g, criterion)
        print(f"[{i}] loss_D {err_d:.4f} loss_G {err_g:.4f}")


if __name__ == "__main__":
    main()
