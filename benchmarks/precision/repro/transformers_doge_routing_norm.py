"""transformers 5.23.0, models/doge/modeling_doge.py:425 and modular_doge.py:370 (GW201 error):
`routing_weights = F.softmax(scores, -1)` then, when config.norm_topk_prob is set,
`routing_weights /= routing_weights.sum(-1, keepdim=True)`. softmax saved its output; the in-place
division changes it, and the backward raises."""
import sys

import torch
import torch.nn.functional as F

scores = torch.randn(3, 4, requires_grad=True)
routing_weights = F.softmax(scores, dim=-1)
routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
try:
    (routing_weights * torch.randn(3, 4)).sum().backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
