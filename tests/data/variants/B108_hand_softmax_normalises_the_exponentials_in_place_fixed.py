# source: hand-written softmax / attention normalisers that divide the exponentials in place, e = torch.exp(s - m); e = e / e.sum(-1, keepdim=True) (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation: ExpBackward0"): exp saves its output for the backward, and the in-place division bumps its version
# family: B
# expect: ok
# line: 22  (backward: 30)
# fix: (fixed version of B108_hand_softmax_normalises_the_exponentials_in_place.py) out-of-place: e = e / e.sum(-1, keepdim=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Attention(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)

    def forward(self, x):
        s = self.q(x) @ self.k(x).transpose(-1, -2) / 8 ** 0.5
        e = torch.exp(s - s.amax(-1, keepdim=True).detach())
        e = e / e.sum(-1, keepdim=True)
        return e @ x


if __name__ == "__main__":
    model = Attention()
    x = torch.randn(2, 5, 8)
    loss = model(x).pow(2).mean()
    loss.backward()
    print("done")
