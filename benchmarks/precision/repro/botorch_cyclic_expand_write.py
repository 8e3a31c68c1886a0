"""botorch 0.18.1 (sdist), optim/optimize.py:213 and :997 (GW301 warning): when every feature is
fixed, `_optimize_acqf_all_features_fixed` returns `X.expand(q, *X.shape)`; `optimize_acqf_cyclic`
then writes each re-optimized candidate with `candidates[i] = candidate_i`. The rows of an expanded
tensor are one row of memory: each write does not raise, it changes every row (harmless there,
where every candidate is the same fixed point; any row written with other values would overwrite
them all)."""
import sys

import torch

q = 3
X = torch.tensor([0.5, 0.25])
candidates = X.expand(q, *X.shape)
candidates[1] = torch.tensor([1.0, 2.0])  # meant for row 1 only
if torch.equal(candidates[0], torch.tensor([1.0, 2.0])) and torch.equal(candidates[2], candidates[1]):
    print("REPRODUCED: writing row 1 changed every row:", candidates.tolist())
    sys.exit(0)
print("not reproduced:", candidates.tolist())
sys.exit(1)
