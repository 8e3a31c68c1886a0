# source: ViT/BERT attention ports scaling the query in place after unbinding the fused qkv projection (`q, k, v = qkv.unbind(0); q *= self.scale`; unbind returns multiple views)
# family: C
# expect: ok
# line: 25
# fix: (fixed version of C31_vit_qkv_unbind_scale_query_inplace.py) scale out-of-place: q = q * self.scale
import torch
import torch.nn as nn

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, dim=16, num_heads=2):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = dim // num_heads
        self.scale = self.head_dim ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q = q * self.scale
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj(x)


if __name__ == "__main__":
    attn = Attention()
    tokens = torch.randn(2, 5, 16)
    loss = attn(tokens).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
