# source: RealNVP / Glow coupling-layer ports permuting channel halves with the NumPy swap idiom `x[:, :d], x[:, d:] = x[:, d:], x[:, :d]` (the right-hand side views alias the target)
# family: C
# expect: silent
# verify: the right-hand side is a tuple of views of x; the first assignment overwrites the data the second view reads, so the result is [x2, x2] and the gradients differ from torch.cat([x2, x1]); MISMATCH is printed
# line: 37  (backward: 47)
# fix: build the permutation out-of-place: x = torch.cat([x[:, d:], x[:, :d]], dim=1)
import torch
import torch.nn as nn

torch.manual_seed(0)


class AffineCoupling(nn.Module):
    def __init__(self, dim=6, hidden=16):
        super().__init__()
        self.d = dim // 2
        self.net = nn.Sequential(nn.Linear(self.d, hidden), nn.Tanh(), nn.Linear(hidden, 2 * self.d))

    def forward(self, x):
        x1, x2 = x[:, :self.d], x[:, self.d:]
        s, t = self.net(x1).chunk(2, dim=1)
        y2 = x2 * torch.exp(torch.tanh(s)) + t
        return torch.cat([x1, y2], dim=1)


class Flow(nn.Module):
    def __init__(self, dim=6, swap_inplace=True):
        super().__init__()
        self.c1, self.c2 = AffineCoupling(dim), AffineCoupling(dim)
        self.d = dim // 2
        self.swap_inplace = swap_inplace

    def forward(self, x):
        x = self.c1(x)
        d = self.d
        if self.swap_inplace:
            x[:, :d], x[:, d:] = x[:, d:], x[:, :d]
        else:
            x = torch.cat([x[:, d:], x[:, :d]], dim=1)
        return self.c2(x)


def input_grad(swap_inplace):
    torch.manual_seed(0)
    flow = Flow(swap_inplace=swap_inplace)
    x = torch.randn(4, 6, requires_grad=True)
    flow(x).pow(2).sum().backward()
    return x.grad


if __name__ == "__main__":
    got, ref = input_grad(True), input_grad(False)
    print("MATCH" if torch.allclose(got, ref) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
