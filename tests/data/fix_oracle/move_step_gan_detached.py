# fix-kind: move_step
# why: the discriminator steps on a detached fake; the generator's loss is computed after the
#      step, through the updated discriminator, as in the DCGAN example.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 4), nn.Tanh())
D = nn.Sequential(nn.Linear(4, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
bce = nn.BCEWithLogitsLoss()
for step in range(3):
    real, z = torch.randn(4, 4), torch.randn(4, 2)
    fake = G(z)
    loss_d = bce(D(real), torch.ones(4, 1)) + bce(D(fake.detach()), torch.zeros(4, 1))
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    loss_g = bce(D(fake), torch.ones(4, 1))
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
    print(f"{step} {loss_d.item():.6f} {loss_g.item():.6f}")
