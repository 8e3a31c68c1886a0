# source: Kendall et al. uncertainty weighting as in https://github.com/lorenmt/mtan/issues/51 (loss = sum(1 / (2 * torch.exp(logsigma[i])) * train_loss[i] + logsigma[i] / 2)); here the task weights are read with .item() (a float, as for the logger) before they are combined, so the learnable log-variances never get a gradient and stay at their initial value
# family: H
# expect: ok
# verify: the log-variances' gradient is compared with autograd's gradient of the same weighting written with tensors
# line: 36  (backward: 52)
# fix: (fixed version of H42_uncertainty_weighting_log_vars_read_with_item.py) keep the weighting in tensors: precision = torch.exp(-log_var); total = total + precision * task_loss + log_var
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SharedTrunk(nn.Module):
    def __init__(self, din=10, hidden=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(din, hidden), nn.ReLU())
        self.depth_head = nn.Linear(hidden, 1)
        self.seg_head = nn.Linear(hidden, 3)

    def forward(self, x):
        h = self.trunk(x)
        return self.depth_head(h).squeeze(-1), self.seg_head(h)


class UncertaintyWeighting(nn.Module):
    def __init__(self, n_tasks):
        super().__init__()
        self.log_vars = nn.Parameter(torch.zeros(n_tasks))

    def forward(self, task_losses):
        total = 0.0
        for log_var, task_loss in zip(self.log_vars, task_losses):
            total = total + torch.exp(-log_var) * task_loss + log_var
        return total


def task_losses(model, x, depth, labels):
    pred_depth, logits = model(x)
    return [F.l1_loss(pred_depth, depth), F.cross_entropy(logits, labels)]


if __name__ == "__main__":
    model, weighting = SharedTrunk(), UncertaintyWeighting(2)
    opt = torch.optim.Adam([*model.parameters(), *weighting.parameters()], lr=1e-2)
    for step in range(3):
        x, depth, labels = torch.randn(8, 10), torch.rand(8), torch.randint(0, 3, (8,))
        loss = weighting(task_losses(model, x, depth, labels))
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4), "task weights", torch.exp(-weighting.log_vars).tolist())

    x, depth, labels = torch.randn(8, 10), torch.rand(8), torch.randint(0, 3, (8,))
    weighting.zero_grad()
    weighting(task_losses(model, x, depth, labels)).backward()
    got = weighting.log_vars.grad
    losses = task_losses(model, x, depth, labels)
    ref_total = sum(torch.exp(-lv) * l + lv for lv, l in zip(weighting.log_vars, losses))
    (ref,) = torch.autograd.grad(ref_total, weighting.log_vars)
    if got is not None and torch.allclose(got, ref, atol=1e-6):
        print("MATCH")
    else:
        print("MISMATCH: the log-variances got", "no gradient" if got is None else got.tolist(), "instead of", ref.tolist())
