# from: opacus 1.6.0 (sdist), examples/dcgan.py:308 with `.detach()` removed (an injected bug)
# pattern: the generator and discriminator forward through `if input.is_cuda and self.ngpu > 1:
#          nn.parallel.data_parallel(self.main, ...) else: self.main(input)`, whose condition the
#          analysis cannot decide; the discriminator's step forgets `fake.detach()`, so its
#          backward frees the generator's graph and the generator's backward raises
# expect: GW504 error 52
# torch: raises
import os

import torch
from torch import nn

ngpu = int(os.environ.get("GW_NGPU", "1"))


class Generator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.Linear(4, 8), nn.Tanh())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output


class Discriminator(nn.Module):
    def __init__(self, ngpu):
        super().__init__()
        self.ngpu = ngpu
        self.main = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, input):
        if input.is_cuda and self.ngpu > 1:
            output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
        else:
            output = self.main(input)
        return output.view(-1)


netG, netD = Generator(ngpu), Discriminator(ngpu)
criterion = nn.BCELoss()
optD = torch.optim.Adam(netD.parameters())
optG = torch.optim.Adam(netG.parameters())
for step in range(2):
    optD.zero_grad()
    errD_real = criterion(netD(torch.randn(5, 8)), torch.ones(5))
    fake = netG(torch.randn(5, 4))
    errD_fake = criterion(netD(fake), torch.zeros(5))  # the injected bug: netD(fake.detach())
    (errD_real + errD_fake).backward()
    optD.step()
    optG.zero_grad()
    errG = criterion(netD(fake), torch.ones(5))
    errG.backward()
    optG.step()
