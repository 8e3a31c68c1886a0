"""torchrl 0.14.1, objectives/value/functional.py:190/205 (GW301 warning): under torch.compile,
`_geom_series_like` builds `rs = r.expand_as(t)` and then writes `rs[0] = 1.0`. Every element of
the expanded tensor is the one element of `r`: the write does not raise, it changes all of them
(and `r` itself), so the cumulative product that follows is all ones instead of 1, r, r**2, ..."""
import sys

import torch

t = torch.zeros(5)
r = torch.tensor(0.9)
rs = r.expand_as(t)  # the torch.compile branch of _geom_series_like
rs[0] = 1.0
series = rs.cumprod(0)
expected = 0.9 ** torch.arange(5.0)
if torch.allclose(series, torch.ones(5)) and r.item() == 1.0 and not torch.allclose(series, expected):
    print("REPRODUCED: one write changed every element:", series.tolist(), "r =", r.item())
    sys.exit(0)
print("not reproduced:", series.tolist())
sys.exit(1)
