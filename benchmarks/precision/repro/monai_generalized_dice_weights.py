"""monai 1.6.1, losses/dice.py:465 (GW201 information): GeneralizedDiceLoss computes the class
weights `w = torch.reciprocal(ground_o)` from the target's volumes and then zeroes the infinite
ones in place, `w[infs] = 0.0`. reciprocal saved its output: with a target that requires grad
(soft labels from a network being trained), the backward through the loss raises."""
import sys

import torch

target = torch.rand(2, 3, 4, 4, requires_grad=True)  # soft labels that require grad
ground_o = torch.sum(target, (2, 3))
ground_o = ground_o * (torch.arange(3.0) > 0)  # one empty class: its weight is infinite
w = torch.reciprocal(ground_o.float())
infs = torch.isinf(w)
w[infs] = 0.0
loss = (w * ground_o).sum()
try:
    loss.backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
