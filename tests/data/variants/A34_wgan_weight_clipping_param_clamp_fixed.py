# source: WGAN reimplementations (martinarjovsky/WassersteinGAN uses p.data.clamp_); users port it as p.clamp_() on the parameter
# family: A
# expect: ok
# line: 25
# fix: (fixed version of A34_wgan_weight_clipping_param_clamp.py) clip through p.data.clamp_(...) or inside `with torch.no_grad():`
import torch
import torch.nn as nn

torch.manual_seed(0)

netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
clip_value = 0.01

for it in range(3):
    real = torch.randn(16, 8)
    fake = netG(torch.randn(16, 4)).detach()
    lossD = netD(fake).mean() - netD(real).mean()
    optD.zero_grad()
    lossD.backward()
    optD.step()
    for p in netD.parameters():
        p.data.clamp_(-clip_value, clip_value)
    lossG = -netD(netG(torch.randn(16, 4))).mean()
    optG.zero_grad()
    lossG.backward()
    optG.step()
print("lossD", lossD.item())
