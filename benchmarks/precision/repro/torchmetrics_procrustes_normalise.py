"""torchmetrics 1.9.0, functional/shape/procrustes.py:45/46 (GW201 information; the
ProcrustesDisparity metric declares is_differentiable = False): the point clouds are centred and
then normalised in place, `point_cloud1 /= linalg.norm(point_cloud1, dim=[1, 2], keepdim=True)`.
The norm saved its input; the division changes it, so differentiating the functional form (as a
shape-alignment loss would) raises."""
import sys

import torch
from torch import linalg

pc = torch.randn(2, 5, 3, requires_grad=True)
pc1 = pc - pc.mean(dim=1, keepdim=True)
pc1 /= linalg.norm(pc1, dim=[1, 2], keepdim=True)
try:
    pc1.pow(2).sum().backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
