import torch
import torch.nn as nn
import torch.nn.functional as F


class LuongAttention(nn.Module):
    """General (bilinear) attention over the encoder outputs, padded positions masked."""

    def __init__(self, hidden):
        super().__init__()
        self.W = nn.Linear(hidden, hidden, bias=False)

    def forward(self, query, keys, mask):
        scores = torch.bmm(self.W(keys), query.unsqueeze(2)).squeeze(2)
        scores = scores.masked_fill(~mask, -1e9)
        attn = F.softmax(scores, dim=1)
        attn.masked_fill_(~mask, 0.0)
        context = torch.bmm(attn.unsqueeze(1), keys).squeeze(1)
        return context, attn
