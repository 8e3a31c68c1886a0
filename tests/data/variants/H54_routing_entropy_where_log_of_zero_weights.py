# source: https://github.com/pytorch/pytorch/issues/68425 ("`torch.where` produces nan in backward pass for differentiable forward pass") and https://github.com/pytorch/pytorch/issues/187297 (NaN gradient from the inactive branch); here the entropy regulariser of a ReLU-normalised router guards p * log(p) with torch.where, but the branch not taken is still differentiated: 0 * log(0) = nan
# family: H
# expect: silent
# verify: the router's gradient is compared with autograd's gradient of the same loss with the log taken of a safe value (torch.where(p > 0, p, 1))
# line: 39  (backward: 55)
# fix: make the unselected branch finite: p_safe = torch.where(p > 0, p, torch.ones_like(p)); ent = torch.where(p > 0, p * p_safe.log(), 0)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ReLURouter(nn.Module):
    """Sparse mixture-of-experts routing: ReLU scores normalised to sum to one (exact zeros)."""

    def __init__(self, dim=8, n_experts=4):
        super().__init__()
        self.score = nn.Linear(dim, n_experts)

    def forward(self, x):
        s = F.relu(self.score(x))
        return s / s.sum(dim=-1, keepdim=True).clamp(min=1e-6)


class MoE(nn.Module):
    def __init__(self, dim=8, n_experts=4, n_out=2):
        super().__init__()
        self.router = ReLURouter(dim, n_experts)
        self.experts = nn.ModuleList(nn.Linear(dim, n_out) for _ in range(n_experts))

    def forward(self, x):
        p = self.router(x)
        outs = torch.stack([e(x) for e in self.experts], dim=1)
        return (p.unsqueeze(-1) * outs).sum(dim=1), p


def routing_entropy(p):
    plogp = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))
    return -plogp.sum(dim=-1).mean()


def loss_fn(model, x, y, ent_weight=0.01):
    out, p = model(x)
    return F.mse_loss(out, y) - ent_weight * routing_entropy(p)


if __name__ == "__main__":
    model = MoE()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(3):
        x, y = torch.randn(16, 8), torch.randn(16, 2)
        loss = loss_fn(model, x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    x, y = torch.randn(16, 8), torch.randn(16, 2)
    watched = list(model.router.parameters())
    got = torch.autograd.grad(loss_fn(model, x, y), watched)
    out, p = model(x)
    safe = torch.where(p > 0, p, torch.ones_like(p))
    ref_loss = F.mse_loss(out, y) + 0.01 * torch.where(p > 0, p * safe.log(), 0.0).sum(-1).mean()
    ref = torch.autograd.grad(ref_loss, watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: non-finite router gradient from the branch torch.where did not select:",
              sum(int((~torch.isfinite(g)).sum()) for g in got), "entries")
