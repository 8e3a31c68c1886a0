"""transformers 5.23.0, models/unispeech_sat/modeling_unispeech_sat.py:1008 and
modular_unispeech_sat.py:318 (GW715 warning): `self.layer_norm_for_extract.requires_grad = False`
(meant to freeze the layer norm when config.do_stable_layer_norm is set) sets a plain attribute on
the module; its weight and bias still require grad and train."""
import sys

import torch
from torch import nn

ln = nn.LayerNorm(4)
ln.requires_grad = False
opt = torch.optim.SGD(ln.parameters(), lr=0.1)
before = ln.weight.detach().clone()
ln(torch.randn(3, 4)).pow(2).sum().backward()
opt.step()
if ln.weight.requires_grad and ln.bias.requires_grad and not torch.equal(before, ln.weight.detach()):
    print("REPRODUCED: the parameters still require grad and the step changed them")
    sys.exit(0)
print("not reproduced: the layer norm is frozen")
sys.exit(1)
