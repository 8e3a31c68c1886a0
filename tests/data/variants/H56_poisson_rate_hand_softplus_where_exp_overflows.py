# source: https://github.com/pytorch/pytorch/issues/156212 ("torch.where() can produce nan values for unselected branch during backward": torch.where(x <= x_th, torch.exp(x), b) "never selects nan and protects against overflows", yet x.grad is nan); here a count-regression head writes a "stable" softplus by hand and large pre-activations overflow exp() in the branch that is not selected
# family: H
# expect: silent
# verify: the rate head's gradient is compared with autograd's gradient of the same Poisson loss with F.softplus
# line: 15  (backward: 49)
# fix: use F.softplus(x) (or evaluate exp on a clamped input: torch.log1p(torch.exp(x.clamp(max=20)))) so that no branch overflows
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def stable_softplus(x, threshold=20.0):
    return torch.where(x > threshold, x, torch.log1p(torch.exp(x)))


class CountRegressor(nn.Module):
    """Predicts event counts from raw (unnormalised) traffic features."""

    def __init__(self, din=5):
        super().__init__()
        self.hidden = nn.Linear(din, 16)
        self.rate = nn.Linear(16, 1)

    def forward(self, x):
        return stable_softplus(self.rate(torch.relu(self.hidden(x)))).squeeze(-1) + 1e-4


def poisson_nll(rate, counts):
    return (rate - counts * torch.log(rate)).mean()


def make_batch(n=32):
    x = torch.rand(n, 5) * torch.tensor([1.0, 1.0, 10.0, 3000.0, 6000.0])  # raw magnitudes
    counts = torch.poisson(x[:, 3] / 100)
    return x, counts


if __name__ == "__main__":
    model = CountRegressor()
    with torch.no_grad():
        model.rate.bias.fill_(2.0)
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    for step in range(3):
        x, counts = make_batch()
        loss = poisson_nll(model(x), counts)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 3))

    x, counts = make_batch()
    watched = list(model.parameters())
    got = torch.autograd.grad(poisson_nll(model(x), counts), watched)
    ref_rate = F.softplus(model.rate(torch.relu(model.hidden(x)))).squeeze(-1) + 1e-4
    ref = torch.autograd.grad(poisson_nll(ref_rate, counts), watched)
    if all(torch.allclose(g, r, rtol=1e-4, atol=1e-4) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: overflowing exp() in the unselected branch turns the gradient into nan:",
              sum(int((~torch.isfinite(g)).sum()) for g in got), "entries")
