# fix-kind: chain_rule
# why: a custom Function that returns gradients for non-tensor inputs as `(None,) * n` must not
#      be multiplied by its incoming gradient; a Function whose output is the loss itself gets
#      grad_output 1 and may ignore it.
import torch


class NoGradFor(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, c):
        return torch.tensor(float(a + b + c))

    @staticmethod
    def backward(ctx, grad):
        return (None,) * 3


class HalfSquareLoss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x * x).sum() / 2

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x


torch.manual_seed(0)
x = torch.randn(4, requires_grad=True)
loss = HalfSquareLoss.apply(x)
loss.backward()
print(f"{loss.item():.6f} {x.grad.sum().item():.6f} {NoGradFor.apply(1, 2, 3).item():.1f}")
