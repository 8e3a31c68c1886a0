"""transformers 5.23.0, models/rwkv/modeling_rwkv.py:264, :280, :320 (GW201 error): with a recurrent
state passed in, the attention and feed-forward blocks read their slice of `state` (the token
shift for a one-token input, and the linear attention's running sums) and afterwards write the new
values into the same tensor in place (`state[1][:, :, layer] = hidden[:, -1]`,
`state[2][:, :, layer] = layer_state[0]`, `state[0][:, :, layer] = ...`). The reads were saved by
the multiplications that use them (their other factors are parameters): a backward through the
block's output raises."""
import sys

import torch
from torch import nn

hidden_size, layers = 4, 2
time_mix_key = nn.Parameter(torch.rand(1, 1, hidden_size))
key_proj = nn.Linear(hidden_size, hidden_size, bias=False)
state = [torch.zeros(1, hidden_size, layers) for _ in range(5)]  # as RwkvModel allocates it
hidden = torch.randn(1, 1, hidden_size, requires_grad=True)  # one token: the cached path
layer = 0
shifted = state[1][:, :, layer]  # a view of the state
key = hidden * time_mix_key + shifted * (1 - time_mix_key)  # mul saves `shifted` (the factor requires grad)
out = key_proj(key)
state[1][:, :, layer] = hidden[:, -1]  # the state updated in place for the next token
try:
    out.sum().backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
