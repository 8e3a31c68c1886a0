# from: d3rlpy 2.8.1, d3rlpy/algos/qlearning/torch/sac_impl.py:284
# pattern: `loss = -(get_parameter(log_temp).exp() * target).mean()` where the target is computed
#          under no_grad and `get_parameter` returns `next(module.parameters())`: the loss has a
#          graph through the parameter (it was reported as "does not require grad")
# expect: none
# torch: ok
import torch
import torch.nn.functional as F
from torch import nn


def get_parameter(module):
    return next(module.parameters())


class Learner:
    def __init__(self, modules):
        self._modules = modules

    def update_temp(self, logits):
        self._modules.temp_optim.zero_grad()
        with torch.no_grad():
            log_probs = F.log_softmax(logits, dim=1)
            target = (log_probs.exp() * log_probs).sum(dim=1, keepdim=True) + 0.98
        loss = -(get_parameter(self._modules.log_temp).exp() * target).mean()
        loss.backward()
        self._modules.temp_optim.step()
        return loss


# --- driver: run under torch, not analysed ---
class Temperature(nn.Module):
    def __init__(self, value):
        super().__init__()
        self._parameter = nn.Parameter(torch.full((1, 1), value))


class Modules:
    pass


mods = Modules()
mods.log_temp = Temperature(0.0)
mods.temp_optim = torch.optim.Adam(mods.log_temp.parameters())
Learner(mods).update_temp(torch.randn(4, 3))
if mods.log_temp._parameter.grad is None:
    print("MISMATCH: no gradient reached the temperature")
