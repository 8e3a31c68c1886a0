"""pyro-ppl 1.9.2, distributions/gaussian_scale_mixture.py:104 (GW201 information):
GaussianScaleMixture.log_prob computes `result = torch.logsumexp(...)` and then
`result -= 0.5 * math.log(2 * math.pi) * float(self.dim)`. logsumexp saved its output; the
in-place subtraction changes it, so a backward through log_prob raises whenever the mixture's
parameters require grad (as when they are learned)."""
import math
import sys

import torch

dim = 3
component_scale = torch.rand(2, requires_grad=True) + 0.5
coord_scale = torch.rand(dim) + 0.5
logits = torch.log_softmax(torch.randn(2), -1)
value = torch.randn(dim)
epsilon_sqr = torch.pow(value / coord_scale, 2.0).sum()
result = torch.logsumexp(component_scale.log() * -dim + logits + -0.5 * epsilon_sqr / component_scale ** 2, dim=-1)
result -= 0.5 * math.log(2.0 * math.pi) * float(dim)
try:
    result.backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
