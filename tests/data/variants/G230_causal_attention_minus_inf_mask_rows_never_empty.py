# source: the masked attention of https://github.com/pytorch/pytorch/issues/41508 without its failure case: a causal mask fills the future with -inf, but every row keeps at least its own position, so the softmax and its gradient stay finite (no all--inf row)
# family: G
# expect: ok
# line: 26
# fix: none needed - no row is fully masked, so exp(-inf) = 0 only multiplies finite values
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        t = x.size(1)
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(1, 2) / math.sqrt(q.size(-1))
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        att = att.masked_fill(future, float("-inf"))
        return self.proj(F.softmax(att, dim=-1) @ v)


if __name__ == "__main__":
    block = CausalSelfAttention()
    opt = torch.optim.Adam(block.parameters(), lr=1e-3)
    for step in range(3):
        x, y = torch.randn(2, 5, 8), torch.randn(2, 5, 8)
        loss = F.mse_loss(block(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        finite = all(torch.isfinite(p.grad).all() for p in block.parameters())
        print("step", step, "loss", round(loss.item(), 4), "finite grads", finite)
        if not finite:
            print("MISMATCH: non-finite gradient")
