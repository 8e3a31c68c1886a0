# source: an adaptive-computation gate that turns a learned halting score into a whole number of steps with ceil and multiplies it back into the output; the gate's parameters receive only ceil's zero gradient (pattern from ACT/PonderNet reimplementations)
# family: H
# expect: ok
# line: 23
# fix: (fixed version of H33_ceil_token_budget_scales_attention.py) keep a differentiable path to the gate
import torch
import torch.nn as nn

torch.manual_seed(0)


class Gate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)
        self.body = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.body(x)
        s = torch.sigmoid(self.score(x)) * 4
        # whole number of refinement steps
        steps = s + (torch.ceil(s) - s).detach()
        return h * steps / 4


if __name__ == "__main__":
    g = Gate(8)
    out = g(torch.randn(5, 8))
    out.sum().backward()
    print("MATCH" if g.score.weight.grad.abs().sum() > 0 else "MISMATCH: ceil() gives the gate a zero gradient")
