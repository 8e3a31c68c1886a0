# source: RevIN-style reversible instance normalisation for time-series forecasting written by hand (forum threads "SqrtBackward0 ... is at version 1; expected version 0"): the per-series standard deviation from .sqrt() is floored with clamp_ in place, and sqrt's backward needs its output
# family: B
# expect: ok
# line: 23  (backward: 32)
# fix: (fixed version of B104_instance_normalisation_clamps_the_sqrt_of_the_variance_in_place.py) clamp out of place: std = std.clamp(min=self.eps)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RevIN(nn.Module):
    def __init__(self, n_vars, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(n_vars))
        self.beta = nn.Parameter(torch.zeros(n_vars))

    def forward(self, x):
        mu = x.mean(dim=1, keepdim=True)
        std = (x - mu).pow(2).mean(dim=1, keepdim=True).sqrt()
        std = std.clamp(min=self.eps)
        return (x - mu) / std * self.gamma + self.beta


if __name__ == "__main__":
    embed, norm, head = nn.Linear(3, 3), RevIN(3), nn.Linear(3, 3)
    series = torch.randn(4, 24, 3) * 5 + 2
    pred = head(norm(embed(series)))
    loss = F.mse_loss(pred[:, -1], torch.zeros(4, 3))
    loss.backward()
    print("loss %.4f" % loss.item())
