# source: LLaMA / Mistral SwiGLU feed-forward (down_proj(act_fn(gate_proj(x)) * up_proj(x))) written with an in-place product to save one activation buffer
# family: G
# expect: ok
# line: 22
# fix: none needed - SiLU's backward saves its input (the gate_proj output), not its output, and mul_ by a tensor saves the other operand and a copy of the old value, so rewriting the SiLU output in place is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        h = F.silu(self.gate_proj(x))
        h.mul_(self.up_proj(x))
        return self.down_proj(h)

    def reference(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


if __name__ == "__main__":
    ffn = SwiGLU(16, 48)
    x = torch.randn(2, 5, 16, requires_grad=True)
    target = torch.randn(2, 5, 16)
    F.mse_loss(ffn(x), target).backward()
    got = [x.grad.clone()] + [p.grad.clone() for p in ffn.parameters()]
    x.grad = None
    ffn.zero_grad()
    F.mse_loss(ffn.reference(x), target).backward()
    ref = [x.grad] + [p.grad for p in ffn.parameters()]
    if all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref)):
        print("gradients match")
    else:
        print("MISMATCH")
