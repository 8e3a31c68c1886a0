import torch
import torch.nn.functional as F

from inversion.generator import Generator
from inversion.latent import init_latent
from inversion.optim import LatentAdam


def invert(G, target, steps=5, generator=None):
    z = init_latent(target.size(0), 8, generator=generator)
    optimizer = LatentAdam([z])
    for _ in range(steps):
        loss = F.mse_loss(G(z), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return z.detach(), loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    G = Generator().eval().requires_grad_(False)
    target = G(torch.randn(2, 8))
    z, loss = invert(G, target, generator=torch.Generator().manual_seed(1))
    print(f"reconstruction loss {loss:.4f}")
