# source: feature-whitening / Barlow-Twins-style losses that add jitter to the diagonal of a covariance matrix in place before a Cholesky factorisation
# family: G
# expect: ok
# line: 15  (backward: 25)
# fix: none needed - cov is the output of a matmul divided by a Python scalar; neither op saves its output, so writing into cov's diagonal view before cholesky is safe
import torch
import torch.nn as nn

torch.manual_seed(0)


def whiten(z, eps=1e-3):
    z = z - z.mean(0, keepdim=True)
    cov = z.t() @ z / (z.size(0) - 1)
    cov.diagonal().add_(eps)
    L = torch.linalg.cholesky(cov)
    return torch.linalg.solve_triangular(L, z.t(), upper=False).t()


if __name__ == "__main__":
    proj = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    x = torch.randn(32, 10)
    w1, w2 = whiten(proj(x + 0.1 * torch.randn_like(x))), whiten(proj(x + 0.1 * torch.randn_like(x)))
    loss = (w1 - w2).pow(2).sum(1).mean()
    loss.backward()
    print("loss", loss.item())
