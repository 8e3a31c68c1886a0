import torch


def init_latent(batch, dim, truncation=0.7, generator=None):
    """A truncated starting latent for the inversion."""
    return torch.randn(batch, dim, generator=generator, requires_grad=True) * truncation
