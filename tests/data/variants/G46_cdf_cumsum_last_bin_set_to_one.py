# source: NeRF hierarchical sampling (sample_pdf): cdf = torch.cumsum(pdf, -1) and a write that forces the last bin to exactly 1 before searchsorted
# family: G
# expect: ok
# line: 16  (backward: 33)
# fix: none needed - cumsum saves nothing for its backward, so overwriting an entry of its output in place is safe (the write only cuts the gradient of that entry)
import torch
import torch.nn as nn

torch.manual_seed(0)


def sample_pdf(bins, weights, n_samples):
    weights = weights + 1e-5
    pdf = weights / torch.sum(weights, -1, keepdim=True)
    cdf = torch.cumsum(pdf, -1)
    cdf[..., -1] = 1.0
    cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)
    u = torch.rand(list(cdf.shape[:-1]) + [n_samples])
    inds = torch.searchsorted(cdf.detach(), u, right=True).clamp(1, cdf.size(-1) - 1)
    cdf_below, cdf_above = torch.gather(cdf, -1, inds - 1), torch.gather(cdf, -1, inds)
    bins_below, bins_above = torch.gather(bins, -1, inds - 1), torch.gather(bins, -1, inds)
    t = (u - cdf_below) / (cdf_above - cdf_below).clamp(min=1e-5)
    return bins_below + t * (bins_above - bins_below)


if __name__ == "__main__":
    coarse = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 8), nn.Softplus())
    rays = torch.randn(4, 3)
    weights = coarse(rays)
    bins = torch.linspace(0, 1, 9).expand(4, 9)
    samples = sample_pdf(bins, weights, 5)
    loss = samples.mean()
    loss.backward()
    print("loss", loss.item())
