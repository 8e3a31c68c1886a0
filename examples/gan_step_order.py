# expect: error
# line: 27
# The classic GAN ordering bug: the discriminator's optimizer steps (updating D's weights in
# place) before the generator's loss, which went through D, is backwarded.
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()

for step in range(3):
    real = torch.randn(16, 4)
    fake = G(torch.randn(16, 8))
    d_fake = D(fake)
    loss_g = bce(d_fake, torch.ones(16, 1))
    loss_d = bce(D(real), torch.ones(16, 1)) + bce(d_fake, torch.zeros(16, 1))

    opt_d.zero_grad()
    loss_d.backward(retain_graph=True)
    # D's step changes the weights that loss_g's graph saved (the Linear layers inside D).
    # Fix: backward both losses first, or recompute D(fake) after this step, and
    # use D(fake.detach()) in loss_d so that D's loss does not train G.
    opt_d.step()

    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
