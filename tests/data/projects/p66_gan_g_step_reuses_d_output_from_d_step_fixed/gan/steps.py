import torch
import torch.nn.functional as F


def bce(logits, value):
    return F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, value))


def discriminator_step(D, opt_D, real, fake):
    """One D update; returns D's logits on the fakes so the G step need not run D again."""
    d_real = D(real)
    d_fake = D(fake.detach())
    loss_D = bce(d_real, 1.0) + bce(d_fake, 0.0)
    opt_D.zero_grad()
    loss_D.backward()
    opt_D.step()
    return loss_D.item(), d_fake


def generator_step(opt_G, d_fake):
    loss_G = bce(d_fake, 1.0)
    opt_G.zero_grad()
    loss_G.backward()
    opt_G.step()
    return loss_G.item()
