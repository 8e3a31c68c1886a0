# source: LSQ (Learned Step Size Quantization, Esser et al. 2020) activation quantizers written as custom autograd.Functions (as in several QAT repos) whose backward masks the straight-through gradient with an in-place setitem, placed on a residual branch where AddBackward hands the same gradient tensor to both branches
# family: G
# expect: ok
# line: 28  (backward: 58)
# fix: none needed - backward clones grad_output before the masked in-place write, and the step-size gradient is computed out-of-place; the shared incoming gradient is never modified (checked against the autograd formulation with round_pass / grad_scale)
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LSQFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step, g, qn, qp):
        ctx.save_for_backward(x, step)
        ctx.g, ctx.qn, ctx.qp = g, qn, qp
        return torch.clamp(torch.round(x / step), qn, qp) * step

    @staticmethod
    def backward(ctx, grad_output):
        x, step = ctx.saved_tensors
        xs = x / step
        lower, upper = xs < ctx.qn, xs > ctx.qp
        middle = ~(lower | upper)
        grad_x = grad_output.clone()
        grad_x[~middle] = 0
        ds = lower.float() * ctx.qn + upper.float() * ctx.qp + middle.float() * (torch.round(xs) - xs)
        grad_step = (ds * grad_output).sum().view_as(step) * ctx.g
        return grad_x, grad_step, None, None, None


def lsq_reference(x, step, g, qn, qp):
    step = (step - step * g).detach() + step * g
    v = torch.clamp(x / step, qn, qp)
    return ((v.round() - v).detach() + v) * step


class QuantResidualBlock(nn.Module):
    def __init__(self, d=16, bits=4, custom=True):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, d), nn.Linear(d, d)
        self.step = nn.Parameter(torch.tensor(0.03))
        self.qn, self.qp, self.custom = 0, 2 ** bits - 1, custom

    def forward(self, x):
        h = F.relu(self.fc2(F.relu(self.fc1(x))))
        g = 1.0 / math.sqrt(h.numel() * self.qp)
        quant = LSQFunction.apply if self.custom else lsq_reference
        return x + quant(h, self.step, g, self.qn, self.qp)


def grads(custom):
    torch.manual_seed(0)
    net = nn.Sequential(QuantResidualBlock(custom=custom), QuantResidualBlock(custom=custom))
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1), requires_grad=True)
    net(x).sum().backward()
    return [x.grad] + [p.grad for p in net.parameters()]


if __name__ == "__main__":
    got, ref = grads(True), grads(False)
    ok = all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH")
