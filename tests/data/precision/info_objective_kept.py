# from: torchmetrics 1.9.0, functional/image/vif.py:70 and pyro-ppl 1.9.2,
#       distributions/gaussian_scale_mixture.py:104 (the real information findings, kept)
# pattern: a function analysed on its own computes an objective (a metric, a log-probability) from
#          reductions of its inputs and writes, in place, a tensor an op saved: the backward through
#          it raises when the inputs require grad
# expect: GW201 information 20
# expect: GW201 information 27
# torch: ok
import math

import torch


def fidelity(preds, target, eps):
    sigma_target_preds = preds * target - 0.25
    sigma_target_sq = target * target
    g = sigma_target_preds / (sigma_target_sq + eps)
    sigma_v_sq = preds * preds - g * sigma_target_preds
    mask = sigma_target_sq < eps
    g[mask] = 0
    return torch.sum(sigma_v_sq) / torch.sum(g)


def log_prob(scale, logits, value):
    epsilon_sqr = torch.pow(value, 2.0).sum()
    result = torch.logsumexp(scale.log() * -3 + logits + -0.5 * epsilon_sqr / torch.pow(scale, 2.0), dim=-1)
    result -= 0.5 * math.log(2.0 * math.pi) * 3.0
    return result


# --- driver: run under torch, not analysed ---
# the findings are real: a backward through either function raises when its inputs require grad
failures = 0
for fn, args in ((fidelity, (torch.rand(4, requires_grad=True), torch.rand(4), 0.1)),
                 (log_prob, (torch.rand(2, requires_grad=True) + 0.5, torch.randn(2), torch.randn(3)))):
    try:
        fn(*args).backward()
    except RuntimeError:
        failures += 1
if failures != 2:
    print("MISMATCH: a backward ran")
