import torch
import torch.nn.functional as F


class GANTrainer:
    def __init__(self, G, D, opt_g, opt_d, z_dim):
        self.G, self.D = G, D
        self.opt_g, self.opt_d = opt_g, opt_d
        self.z_dim = z_dim

    def step(self, real):
        z = torch.randn(real.size(0), self.z_dim)
        fake = self.G(z)
        d_real = self.D(real)
        d_fake = self.D(fake)
        ones = torch.ones_like(d_real)
        zeros = torch.zeros_like(d_fake)
        d_loss = F.binary_cross_entropy_with_logits(d_real, ones) + F.binary_cross_entropy_with_logits(d_fake, zeros)
        self.opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        self.opt_d.step()
        self.opt_g.zero_grad()
        g_loss = F.binary_cross_entropy_with_logits(self.D(fake), ones)
        g_loss.backward()
        self.opt_g.step()
        return d_loss.item(), g_loss.item()
