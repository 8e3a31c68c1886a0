# from: open-clip-torch 3.3.0, open_clip/loss.py:305 and :322
# pattern: `(None, None, None) + (Fn.apply(...),)` and `(None,) * 3 + Fn.apply(...)`, where apply
#          returns what forward returns (a tuple of two tensors for the second Function)
# expect: quiet
# torch: ok
import torch


def exchange(src, dst, tensor):
    return tensor.flip(0)


def exchange_both(src, dst, to_left, to_right):
    return to_right.flip(0), to_left.flip(0)


class Exchange(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, dst, group, tensor):
        ctx.src, ctx.dst, ctx.group = src, dst, group
        return exchange(src, dst, tensor)

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None) + (Exchange.apply(ctx.dst, ctx.src, ctx.group, grad_output),)


class ExchangeBoth(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, dst, group, to_left, to_right):
        ctx.src, ctx.dst, ctx.group = src, dst, group
        return exchange_both(src, dst, to_left, to_right)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None,) * 3 + ExchangeBoth.apply(ctx.dst, ctx.src, ctx.group, *grad_outputs)


t = torch.randn(4, requires_grad=True)
(Exchange.apply(0, 1, None, t) * torch.arange(4.0)).sum().backward()
left = torch.randn(4, requires_grad=True)
right = torch.randn(4, requires_grad=True)
u, v = ExchangeBoth.apply(0, 1, None, left, right)
(u.sum() + 2 * v.sum()).backward()
if not torch.equal(t.grad, torch.arange(4.0).flip(0)) or not torch.equal(left.grad, torch.full((4,), 2.0)):
    print("MISMATCH")
