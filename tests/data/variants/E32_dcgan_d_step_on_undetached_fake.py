# source: DCGAN training loops (pytorch/examples dcgan) with the `.detach()` dropped from netD(fake.detach()): errD_fake.backward() frees G's graph and the generator step fails
# family: E
# expect: error
# line: 29  (backward: 38)
# fix: train D on netD(fake.detach()); the generator step then backpropagates through a fresh D forward on fake
import torch
import torch.nn as nn

torch.manual_seed(0)

nz = 8
netG = nn.Sequential(nn.Linear(nz, 32), nn.BatchNorm1d(32), nn.ReLU(True), nn.Linear(32, 16), nn.Tanh())
netD = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2, inplace=True), nn.Linear(32, 1), nn.Sigmoid())
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for i in range(2):
    real = torch.randn(8, 16)
    b_size = real.size(0)
    netD.zero_grad()
    label = torch.full((b_size,), real_label)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    noise = torch.randn(b_size, nz)
    fake = netG(noise)
    label.fill_(fake_label)
    output = netD(fake).view(-1)
    errD_fake = criterion(output, label)
    errD_fake.backward()
    optimizerD.step()

    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake).view(-1)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
print("errG", errG.item())
