# fix-kind: complete_grads
# why: backward returns complete tuples built in ways the syntax does not spell out: a static
#      helper returning a tuple, tuple arithmetic with another Function's tuple, `(None,) * n`.
#      Adding `, None` to any of them raises in backward.
import torch


class Natural(torch.autograd.Function):
    @staticmethod
    def _grads(g, a, b):
        return g * b, g * a, None

    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return Natural._grads(g, a, b)


class Both(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return t * 2, t * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


class Outer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, c, t):
        return t * 2

    @staticmethod
    def backward(ctx, g):
        return (None,) * 3 + (g * 2,)


class NoneTimes(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, c, d):
        return torch.zeros(1)

    @staticmethod
    def backward(ctx, g):
        return (None,) * 4


torch.manual_seed(0)
a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
Natural.apply(a, b, 2.0).sum().backward()
u, v = Both.apply(a)
(u.sum() + v.sum()).backward()
t = torch.randn(3, requires_grad=True)
Outer.apply(1, 2, 3, t).sum().backward()
print(f"{a.grad.sum().item():.6f} {b.grad.sum().item():.6f} {t.grad.sum().item():.6f} "
      f"{NoneTimes.apply(1, 2, 3, 4).item():.1f}")
