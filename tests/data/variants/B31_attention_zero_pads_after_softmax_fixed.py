# source: forum "zero out padded keys after softmax in self-attention" (attn.masked_fill_ on the softmax output; SoftmaxBackward0 needs its output)
# family: B
# expect: ok
# line: 26  (backward: 35)
# fix: (fixed version of B31_attention_zero_pads_after_softmax.py) mask out-of-place: attn = attn.masked_fill(pad_mask[:, None, :], 0.0) (or mask the scores with -inf before the softmax)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelfAttention(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.d = d
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x, pad_mask):
        q, k, v = self.qkv(x).split(self.d, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d)
        attn = F.softmax(scores, dim=-1)
        attn = attn.masked_fill(pad_mask[:, None, :], 0.0)
        return self.out(attn @ v)


if __name__ == "__main__":
    layer = SelfAttention()
    x = torch.randn(2, 5, 16)
    pad_mask = torch.tensor([[False] * 5, [False, False, False, True, True]])
    loss = layer(x, pad_mask).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
