# source: hand-written attention that zeroes padded keys in the attention probabilities with masked_fill_ after the softmax (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation: SoftmaxBackward"): softmax saves its output for backward, and the in-place fill bumps its version
# family: B
# expect: ok
# line: 23  (backward: 31)
# fix: (fixed version of B106_attention_probabilities_masked_in_place_after_softmax.py) out of place: attn = attn.masked_fill(pad[:, None, :], 0.0) (or mask the scores with -inf before the softmax)
import torch
import torch.nn as nn
import torch.nn.functional as F
import math

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x, pad):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = (q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))).softmax(dim=-1)
        attn = attn.masked_fill(pad[:, None, :], 0.0)
        return self.proj(attn @ v)


if __name__ == "__main__":
    layer = Attention()
    x = torch.randn(2, 5, 8)
    pad = torch.tensor([[False] * 4 + [True], [False] * 3 + [True] * 2])
    layer(x, pad).pow(2).mean().backward()
    print("grad", layer.qkv.weight.grad.norm().item())
