"""pytorch/examples dcgan in small: in-place ReLU/LeakyReLU, batch norm, a DataLoader with two
workers, the discriminator trained on a detached fake batch, then the generator."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
nz, ngf, ndf = 8, 8, 8
netG = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
    nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf), nn.ReLU(True),
    nn.ConvTranspose2d(ngf, 3, 4, 2, 1, bias=False), nn.Tanh())
netD = nn.Sequential(
    nn.Conv2d(3, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2), nn.LeakyReLU(0.2, inplace=True),
    nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())

if __name__ == "__main__":
    netG.apply(lambda m: nn.init.normal_(m.weight, 0.0, 0.02) if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)) else None)
    criterion = nn.BCELoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    loader = DataLoader(TensorDataset(torch.randn(32, 3, 16, 16)), batch_size=8, num_workers=2)
    for i, (real,) in enumerate(loader):
        netD.zero_grad()
        b = real.size(0)
        output = netD(real).view(-1)
        errD_real = criterion(output, torch.full((b,), 1.0))
        errD_real.backward()
        fake = netG(torch.randn(b, nz, 1, 1))
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, torch.full((b,), 0.0))
        errD_fake.backward()
        optD.step()
        netG.zero_grad()
        output = netD(fake).view(-1)
        errG = criterion(output, torch.full((b,), 1.0))
        errG.backward()
        optG.step()
        print("%d Loss_D %.5f Loss_G %.5f" % (i, (errD_real + errD_fake).item(), errG.item()))
