# from: opacus 1.6.0 (sdist), examples/dcgan.py:275 (make_private) and :308 with `.detach()`
#       removed (an injected bug)
# pattern: `netD, optimizerD, loader = privacy_engine.make_private(module=netD, ...)`, a call the
#          analysis cannot see that gives back wrappers of the objects it is given under the same
#          names; the missing detach must still be found
# expect: GW504 error 54
# torch: raises
import torch
from torch import nn

try:
    from opacus import PrivacyEngine
except ImportError:  # opacus is not installed where the tests run: wrapping changes nothing here
    class PrivacyEngine:
        def make_private(self, module, optimizer, data_loader, **kwargs):
            return module, optimizer, data_loader


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(4, 8), nn.Tanh())

    def forward(self, input):
        return self.main(input)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1)


netG, netD = Generator(), Discriminator()
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters())
dataloader = [(torch.randn(5, 8),) for _ in range(2)]
privacy_engine = PrivacyEngine()
netD, optimizerD, dataloader = privacy_engine.make_private(
    module=netD,
    optimizer=optimizerD,
    data_loader=dataloader,
    noise_multiplier=1.0,
    max_grad_norm=1.0,
)
optimizerG = torch.optim.Adam(netG.parameters())
for (real,) in dataloader:
    optimizerD.zero_grad()
    errD_real = criterion(netD(real), torch.ones(5))
    fake = netG(torch.randn(5, 4))
    errD_fake = criterion(netD(fake), torch.zeros(5))  # the injected bug: netD(fake.detach())
    (errD_real + errD_fake).backward()
    optimizerD.step()
    optimizerG.zero_grad()
    errG = criterion(netD(fake), torch.ones(5))
    errG.backward()
    optimizerG.step()
