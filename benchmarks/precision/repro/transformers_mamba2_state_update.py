"""transformers 5.23.0: models/mamba2/modeling_mamba2.py:232 and the same step in bamba (442),
falcon_h1 (447), granitemoehybrid (362), nemotron_h (248), zamba2 (504) (GW201 error). In the
one-token path with a recurrent state (`recurrent_state is not None and seq_len == 1`), the
selective state update computes `ssm_states = state * dA + dBx` and then `state.copy_(ssm_states)`.
dA = exp(dt * A) requires grad (A = -exp(A_log), a parameter), so the multiplication saved `state`;
the copy changes it, and a backward through the mixer's output raises (when that path runs with
gradients on)."""
import sys

import torch
from torch import nn

heads, head_dim, state_size = 2, 3, 4
A_log = nn.Parameter(torch.rand(heads))
state = torch.zeros(1, heads, head_dim, state_size)  # the cache's recurrent state
dt = torch.rand(1, heads, head_dim, 1)
hidden_states = torch.randn(1, heads, head_dim, requires_grad=True)
B = torch.randn(1, heads, 1, state_size)
C = torch.randn(1, heads, state_size)
A = -torch.exp(A_log.float())[None, :, None, None]
dA = torch.exp(dt * A)
dBx = dt * B * hidden_states[..., None]
ssm_states = state * dA + dBx  # mul saves `state` (dA requires grad)
state.copy_(ssm_states)
out = (ssm_states @ C.unsqueeze(-1)).squeeze(-1)
try:
    out.sum().backward()
except RuntimeError as e:
    print("REPRODUCED:", str(e).splitlines()[0][:120])
    sys.exit(0)
print("not reproduced: backward ran")
sys.exit(1)
