import torch


def vanilla_gradient(model, x, target):
    x = x.clone().requires_grad_(True)
    model(x)[:, target].sum().backward()
    return x.grad.detach()


def smooth_grad(model, x, target, n_samples=8, sigma=0.15, generator=None):
    """SmoothGrad: the average input gradient over noisy copies of the input."""
    inp = x.clone().requires_grad_(True)
    total = torch.zeros_like(x)
    for _ in range(n_samples):
        inp.data = x + sigma * torch.randn(x.shape, generator=generator)
        model(inp)[:, target].sum().backward()
        total += inp.grad
        inp.grad = None
    return total / n_samples
