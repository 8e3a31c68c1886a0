import torch
import torch.nn as nn

from saliency import smooth_grad


def make_model():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))


def reference_smooth_grad(model, x, target, n_samples, sigma, generator):
    total = torch.zeros_like(x)
    for _ in range(n_samples):
        noisy = (x + sigma * torch.randn(x.shape, generator=generator)).requires_grad_(True)
        (g,) = torch.autograd.grad(model(noisy)[:, target].sum(), noisy)
        total += g
    return total / n_samples


if __name__ == "__main__":
    torch.manual_seed(0)
    model = make_model().eval()
    image = torch.randn(1, 1, 6, 6)
    ours = smooth_grad(model, image, target=1, n_samples=4, generator=torch.Generator().manual_seed(3))
    ref = reference_smooth_grad(model, image, 1, 4, 0.15, torch.Generator().manual_seed(3))
    print("MATCH" if torch.allclose(ours, ref, atol=1e-6) else "MISMATCH: the saliency map sums running totals")
