# source: GAN training loops that feed the generator's output to the discriminator loss without .detach() and later backpropagate the generator loss through the same fake batch (forum threads "Trying to backward through the graph a second time" in DCGAN ports): the discriminator's backward frees the generator's part of the graph, and the generator's backward goes through it again
# family: D
# expect: ok
# line: 22  (backward: 28)
# fix: (fixed version of D128_gan_discriminator_loss_on_undetached_fakes_then_generator_backward.py) detach the fakes for the discriminator: bce(D(fake.detach()), zeros)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6))
    D = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    real, ones, zeros = torch.randn(8, 6), torch.ones(8, 1), torch.zeros(8, 1)
    for step in range(2):
        fake = G(torch.randn(8, 4))
        d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = bce(D(fake), ones)
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    print("d %.3f g %.3f" % (d_loss.item(), g_loss.item()))
