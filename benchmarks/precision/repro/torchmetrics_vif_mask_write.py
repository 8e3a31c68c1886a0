"""torchmetrics 1.9.0, functional/image/vif.py:70 (GW201 information; VisualInformationFidelity
declares is_differentiable = True): `g = sigma_target_preds / (sigma_target_sq + eps)`,
`sigma_v_sq = sigma_preds_sq - g * sigma_target_preds` (mul saves g, the other factor requiring
grad), then `g[mask] = 0`: a backward through the metric raises."""
import sys

import torch

preds = torch.rand(1, 1, 8, 8, requires_grad=True)
target = torch.rand(1, 1, 8, 8)
sigma_target_preds = preds * target - 0.25
sigma_target_sq = target * target
g = sigma_target_preds / (sigma_target_sq + 1e-10)
sigma_v_sq = preds * preds - g * sigma_target_preds
mask = sigma_target_sq < 0.1
g[mask] = 0
try:
    (g.sum() + sigma_v_sq.sum()).backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
