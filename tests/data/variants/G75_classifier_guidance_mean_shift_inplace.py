# source: guided-diffusion (Dhariwal & Nichol) classifier guidance: cond_fn takes torch.autograd.grad of log p(y|x_t) w.r.t. a detached copy of x_t inside torch.enable_grad(), and the sampler shifts the posterior mean by it inside a no_grad sampling loop
# family: G
# expect: ok
# line: 45, 47
# fix: none needed - the in-place shifts act on tensors created under torch.no_grad() (the whole sampler is decorated), and the only graph (the classifier's, on a fresh leaf x_in) is consumed by autograd.grad before any write
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

T = 10
betas = torch.linspace(1e-4, 0.05, T)
alphas = 1.0 - betas
alphas_bar = torch.cumprod(alphas, 0)


class EpsModel(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d + 1, 32), nn.SiLU(), nn.Linear(32, d))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.float()[:, None] / T], 1))


def cond_fn(classifier, x, y):
    with torch.enable_grad():
        x_in = x.detach().requires_grad_(True)
        log_probs = F.log_softmax(classifier(x_in), dim=-1)
        selected = log_probs[torch.arange(len(y)), y]
        return torch.autograd.grad(selected.sum(), x_in)[0]


@torch.no_grad()
def sample(model, classifier, y, d=6, scale=2.0):
    x = torch.randn(len(y), d)
    for i in reversed(range(T)):
        t = torch.full((len(y),), i)
        eps = model(x, t)
        mean = (x - betas[i] / torch.sqrt(1 - alphas_bar[i]) * eps) / torch.sqrt(alphas[i])
        var = betas[i]
        mean.add_(cond_fn(classifier, x, y), alpha=scale * var.item())
        x = mean + (math.sqrt(var) * torch.randn_like(x) if i > 0 else 0.0)
        x.clamp_(-3.0, 3.0)
    return x


if __name__ == "__main__":
    model, classifier = EpsModel(), nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    y = torch.tensor([0, 1, 2, 1])
    samples = sample(model, classifier, y)
    print("samples", samples.shape, "mean", round(samples.mean().item(), 4))
