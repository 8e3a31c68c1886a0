# source: Megatron-style fused scale-mask-softmax custom Functions (save their output for backward) followed by F.dropout(..., inplace=True) on the attention probabilities
# family: F
# expect: ok
# line: 41  (backward: 50)
# fix: (fixed version of F37_fused_softmax_function_then_inplace_dropout.py) use out-of-place dropout on the probabilities: F.dropout(probs, self.p, self.training) (the Function saved probs)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScaleMaskSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, scores, mask, scale):
        probs = torch.softmax(scores * scale + mask, dim=-1)
        ctx.save_for_backward(probs)
        ctx.scale = scale
        return probs

    @staticmethod
    def backward(ctx, grad_output):
        probs, = ctx.saved_tensors
        grad = probs * (grad_output - (grad_output * probs).sum(-1, keepdim=True))
        return grad * ctx.scale, None, None


class CoreAttention(nn.Module):
    def __init__(self, d=16, p=0.1):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.dense = nn.Linear(d, d)
        self.p = p

    def forward(self, x, causal_mask):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-1, -2)
        probs = ScaleMaskSoftmax.apply(scores, causal_mask, 1.0 / math.sqrt(q.size(-1)))
        probs = F.dropout(probs, self.p, self.training)
        return self.dense(probs @ v)


if __name__ == "__main__":
    T = 5
    mask = torch.triu(torch.full((T, T), -1e4), diagonal=1)
    attn = CoreAttention().train()
    loss = attn(torch.randn(2, T, 16), mask).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
