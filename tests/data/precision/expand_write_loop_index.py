# from: botorch 0.18.1 (sdist), botorch/optim/optimize.py:213 (expand) and :997 (the write)
# pattern: `candidates[i] = ...` in a loop, into `X.expand(q, *X.shape)` returned by a helper;
#          which helper path runs is decided by an options object copied with dataclasses.replace
# expect: GW301 warning 20
# torch: silent
import dataclasses
import os

import torch


@dataclasses.dataclass(frozen=True)
class Inputs:
    q: int
    best_only: bool


def all_features_fixed(values, q, best_only):
    x = torch.tensor(values)
    x = x.expand(q, *x.shape)
    if not best_only:
        x = x.unsqueeze(0)
    return x


def optimize(inputs):
    return all_features_fixed([1.0, 2.0, 3.0], inputs.q, inputs.best_only)


def optimize_cyclic(q):
    inputs = Inputs(q=q, best_only=True)
    candidates = optimize(dataclasses.replace(inputs, q=q))
    for i in range(q):
        # the rows share one memory cell per column: each write changes every row
        candidates[i] = candidates[i] + i
    return candidates


out = optimize_cyclic(int(os.environ.get("GW_Q", "4")))
if torch.equal(out[0], out[-1]) and out[0, 0].item() != 1.0:
    print("MISMATCH: one write per row changed every row", out[:, 0].tolist())
