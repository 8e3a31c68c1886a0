"""An adversarial autoencoder's regularization phase: the discriminator and the encoder (as a
generator) each take a step on losses computed from the same forward."""
import torch
import torch.nn.functional as F


def regularization_step(enc, disc, opt_enc, opt_disc, x):
    z_fake = enc(x)
    z_real = torch.randn_like(z_fake)
    d_real, d_fake = disc(z_real), disc(z_fake.detach())
    d_loss = F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real)) + \
        F.binary_cross_entropy_with_logits(d_fake, torch.zeros_like(d_fake))
    opt_disc.zero_grad()
    d_loss.backward()
    opt_disc.step()
    g_out = disc(z_fake)
    g_loss = F.binary_cross_entropy_with_logits(g_out, torch.ones_like(g_out))
    opt_enc.zero_grad()
    g_loss.backward()
    opt_enc.step()
    return d_loss.item(), g_loss.item()
