"""kornia 0.9.0, feature/orientation.py:192 (GW720 warning): PatchDominantGradientOrientation refines
the histogram peak with `torch.where(denom != 0, 0.5 * (left - right) / denom, zeros)`. The library's
own comment says flat and uniform patches give `denom == 0`: there the forward takes the zero, but the
backward of the division still runs on every element, and `0 x inf = NaN` reaches the patch's
gradient (the orientation estimator is differentiable: kornia's LAF orientation uses it on patches that
may require grad). Reduced: the steps after the histogram, on a flat patch and a textured one."""
import math
import sys

import torch

num_ang_bins = 36
patch = torch.zeros(2, num_ang_bins, requires_grad=True)  # histogram-like values of two patches
ang_bins = patch * 1.0 + torch.cat([torch.zeros(1, num_ang_bins),  # a flat patch: an empty histogram
                                    torch.rand(1, num_ang_bins)])  # a textured one
values, indices = ang_bins.max(1)
indices_left = (num_ang_bins + indices - 1) % num_ang_bins
indices_right = (indices + 1) % num_ang_bins
left = torch.gather(ang_bins, 1, indices_left.reshape(-1, 1)).reshape(-1)
center = values
right = torch.gather(ang_bins, 1, indices_right.reshape(-1, 1)).reshape(-1)
denom = left + right - 2.0 * center
c_subpix = torch.where(denom != 0, 0.5 * (left - right) / denom, torch.zeros_like(denom))
angle = -((2.0 * math.pi * (indices.to(patch.dtype) + c_subpix) / float(num_ang_bins)) - math.pi)
angle.sum().backward()
if bool(torch.isfinite(angle).all()) and bool(torch.isnan(patch.grad).any()):
    print("REPRODUCED: finite angles, NaN gradient:", patch.grad.isnan().sum().item(), "NaN entries")
    sys.exit(0)
print("not reproduced:", patch.grad)
sys.exit(1)
