# source: attention re-implementations whose reshape helpers were marked @torch.no_grad() "because they only move memory" (forum threads "A view was created in no_grad mode and is being modified inplace with grad mode enabled"): split_heads returns a view made under no_grad, and the caller scales the queries in place
# family: C
# expect: error
# line: 12, 32
# fix: drop the decorator from the reshape helper (or scale out of place: q = q * self.scale)
import torch
import torch.nn as nn

torch.manual_seed(0)


@torch.no_grad()
def split_heads(x, n_heads):
    b, t, d = x.shape
    return x.view(b, t, n_heads, d // n_heads).transpose(1, 2)


class SelfAttention(nn.Module):
    def __init__(self, d=32, n_heads=4):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.proj = nn.Linear(d, d)
        self.n_heads = n_heads
        self.scale = (d // n_heads) ** -0.5

    def forward(self, x):
        q = split_heads(self.q(x), self.n_heads)
        k = split_heads(self.k(x), self.n_heads)
        v = split_heads(self.v(x), self.n_heads)
        q.mul_(self.scale)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(x.shape)
        return self.proj(out)


if __name__ == "__main__":
    layer = SelfAttention()
    x = torch.randn(2, 5, 32)
    loss = layer(x).pow(2).mean()
    loss.backward()
    print("loss %.4f" % loss.item())
