# source: attention-pooling heads that compute one score per token, broadcast it to all heads with expand() and then apply per-head masks in place
# family: C
# expect: error
# line: 24  (backward: 36)
# fix: materialise the broadcast scores (scores = scores.expand(...).clone()) or mask out-of-place with masked_fill
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiHeadAttentionPool(nn.Module):
    def __init__(self, d=12, heads=3):
        super().__init__()
        self.heads = heads
        self.score = nn.Linear(d, 1)
        self.value = nn.Linear(d, d)

    def forward(self, x, head_mask):
        B, T, D = x.shape
        scores = self.score(x).transpose(1, 2)
        scores = scores.expand(-1, self.heads, -1)
        scores.masked_fill_(~head_mask, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        v = self.value(x).view(B, T, self.heads, D // self.heads).transpose(1, 2)
        return (attn.unsqueeze(-1) * v).sum(2).reshape(B, D)


if __name__ == "__main__":
    pool = MultiHeadAttentionPool()
    x = torch.randn(2, 5, 12)
    head_mask = torch.rand(2, 3, 5) > 0.3
    head_mask[..., 0] = True
    loss = pool(x, head_mask).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
