# source: attention modules with a learned (heads, n, n) relative bias that blank the self-position through bias.diagonal(dim1=-2, dim2=-1).zero_() in forward (forum threads "a view of a leaf Variable that requires grad is being used in an in-place operation"): the diagonal is a view of the Parameter and the in-place zero raises
# family: C
# expect: error
# line: 21
# fix: mask out of place: bias = self.rel_bias.masked_fill(torch.eye(n, dtype=torch.bool), 0.0)
import torch
import torch.nn as nn

torch.manual_seed(0)


class BiasedSelfAttention(nn.Module):
    def __init__(self, d=8, heads=2, n=5):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.rel_bias = nn.Parameter(torch.randn(heads, n, n) * 0.1)

    def forward(self, x):
        b, n, d = x.shape
        self.rel_bias.diagonal(dim1=-2, dim2=-1).zero_()
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5 + self.rel_bias
        out = att.softmax(-1) @ v
        return out.transpose(1, 2).reshape(b, n, d)


if __name__ == "__main__":
    attn = BiasedSelfAttention()
    attn(torch.randn(3, 5, 8)).pow(2).mean().backward()
    print("bias grad", attn.rel_bias.grad.norm().item())
