# source: a soft-binning layer that splits a learned coordinate into an integer bin (trunc) and a fractional offset used for interpolation: the coordinate still gets gradient through the offset (a correct use of a zero-derivative op)
# family: G
# expect: ok
# line: 17
# fix: (correct code: the coordinate trains through the fractional part)
import torch
import torch.nn as nn

torch.manual_seed(0)


class SoftBin(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.pos = nn.Parameter(torch.rand(n) * 5)

    def forward(self, table):
        lo = torch.trunc(self.pos)
        frac = self.pos - lo
        i = lo.long()
        return table[i] * (1 - frac) + table[i + 1] * frac


if __name__ == "__main__":
    m = SoftBin(4)
    table = torch.randn(8)
    m(table).sum().backward()
    print("MATCH" if m.pos.grad.abs().sum() > 0 else "MISMATCH: the position got no gradient")
