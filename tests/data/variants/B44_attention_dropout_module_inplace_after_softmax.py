# source: transformer ports that build `self.attn_drop = nn.Dropout(p, inplace=True)` for memory and apply it to the nn.Softmax output (SoftmaxBackward needs that output)
# family: B
# expect: error
# line: 17, 24  (backward: 31)
# fix: construct the attention dropout without inplace (nn.Dropout(p)); in-place dropout is only safe on tensors no backward saved
import torch
import torch.nn as nn

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, d=16, p=0.1):
        super().__init__()
        self.to_qkv = nn.Linear(d, 3 * d, bias=False)
        self.attend = nn.Softmax(dim=-1)
        self.attn_drop = nn.Dropout(p, inplace=True)
        self.to_out = nn.Linear(d, d)
        self.scale = d ** -0.5

    def forward(self, x):
        q, k, v = self.to_qkv(x).chunk(3, dim=-1)
        attn = self.attend(q @ k.transpose(-1, -2) * self.scale)
        attn = self.attn_drop(attn)
        return self.to_out(attn @ v)


if __name__ == "__main__":
    layer = Attention().train()
    loss = layer(torch.randn(2, 6, 16)).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
