import torch
import torch.nn as nn


class QKNet(nn.Module):
    def __init__(self, dim, heads, scale_inplace=False):
        super().__init__()
        self.qk = nn.Linear(dim, 2 * dim)
        self.scale = (dim // heads) ** -0.5
        self.scale_inplace = scale_inplace

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        if self.scale_inplace:
            q.mul_(self.scale)
        else:
            q = q * self.scale
        attn = torch.softmax(q @ k.transpose(-2, -1), dim=-1)
        return attn @ x
