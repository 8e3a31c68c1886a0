# source: forum advice "use .data to avoid the in-place error": flooring softmax probabilities with probs.data.clamp_(min=eps) before taking the log in a KL / cross-entropy
# family: F
# expect: ok
# verify: (fixed: out-of-place clamp on both paths) SoftmaxBackward reads its saved output, which the .data write changed without a version bump; the logits gradient is compared with the out-of-place probs.clamp(min=eps) and MISMATCH is printed
# line: 16  (backward: 27)
# fix: (fixed version of F34_softmax_probs_floor_via_data.py) clamp out-of-place: probs = probs.clamp(min=eps)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def soft_target_loss(logits, target_probs, eps=0.05, via_data=True):
    probs = F.softmax(logits, dim=-1)
    probs = probs.clamp(min=eps)
    return -(target_probs * probs.log()).sum(-1).mean()


def logits_grad(via_data):
    torch.manual_seed(0)
    head = nn.Linear(6, 8)
    x = torch.randn(5, 6)
    logits = head(x) * 3.0
    logits.retain_grad()
    target = torch.softmax(torch.randn(5, 8), -1)
    soft_target_loss(logits, target, via_data=via_data).backward()
    return logits.grad


if __name__ == "__main__":
    got, ref = logits_grad(True), logits_grad(False)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
