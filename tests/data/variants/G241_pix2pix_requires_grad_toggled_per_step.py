# source: https://github.com/junyanz/pytorch-CycleGAN-and-pix2pix (models/pix2pix_model.py optimize_parameters: set_requires_grad(netD, True) before the D step, False before the G step)
# family: G
# expect: ok
# line: 34
# fix: none needed - D is frozen only for the generator's step and enabled again for its own
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def set_requires_grad(nets, requires_grad=False):
    for net in nets if isinstance(nets, list) else [nets]:
        for p in net.parameters():
            p.requires_grad = requires_grad


net_g = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())
net_d = nn.Sequential(nn.Conv2d(6, 8, 4, stride=2, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, padding=1))
opt_g = torch.optim.Adam(net_g.parameters(), lr=2e-4, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(net_d.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(3):
    real_a, real_b = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
    fake_b = net_g(real_a)
    set_requires_grad(net_d, True)
    opt_d.zero_grad()
    pred_fake = net_d(torch.cat([real_a, fake_b.detach()], 1))
    pred_real = net_d(torch.cat([real_a, real_b], 1))
    loss_d = 0.5 * (F.mse_loss(pred_fake, torch.zeros_like(pred_fake)) + F.mse_loss(pred_real, torch.ones_like(pred_real)))
    loss_d.backward()
    opt_d.step()
    set_requires_grad(net_d, False)
    opt_g.zero_grad()
    pred_fake = net_d(torch.cat([real_a, fake_b], 1))
    loss_g = F.mse_loss(pred_fake, torch.ones_like(pred_fake)) + 10 * F.l1_loss(fake_b, real_b)
    loss_g.backward()
    opt_g.step()

ok = all(p.grad is not None for p in [*net_d.parameters(), *net_g.parameters()])
print("MATCH" if ok else "MISMATCH: a network got no gradient")
