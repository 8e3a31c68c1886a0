# source: WGAN loops where the critic weight clipping (p.data.clamp_) was moved into a helper that runs after the generator loss was computed but before errG.backward()
# family: F
# expect: silent
# verify: the generator loss graph saved the critic weights; the .data clamp rewrites them without a version bump, so errG.backward() silently uses the clipped critic. G's gradient is compared with torch.autograd.grad taken before the clipping and MISMATCH is printed
# line: 15  (backward: 34)
# fix: clip the critic right after optD.step(), before the generator forward (or compute errG after clipping)
import torch
import torch.nn as nn

torch.manual_seed(0)


def clip_critic_(netD, c):
    for p in netD.parameters():
        p.data.clamp_(-c, c)


if __name__ == "__main__":
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    netD = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
    optG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)
    real, z = torch.randn(8, 8), torch.randn(8, 4)

    errD = netD(netG(z).detach()).mean() - netD(real).mean()
    optD.zero_grad()
    errD.backward()
    optD.step()

    errG = -netD(netG(z)).mean()
    ref = torch.autograd.grad(errG, list(netG.parameters()), retain_graph=True)
    clip_critic_(netD, 0.01)
    optG.zero_grad()
    errG.backward()
    got = [p.grad for p in netG.parameters()]
    ok = all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref))
    optG.step()
    print("MATCH" if ok else "MISMATCH: generator gradient computed with the clipped critic")
