# expect: silent
# line: 20
# A straight-through estimator that clamps the incoming gradient in place. After `.sum()`
# the incoming gradient is an expanded tensor: one memory cell shared by every element.
import torch


class HardTanhSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1.0, 1.0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        grad = grad_output
        # Fix: grad = grad_output.clone()
        outside = (x.abs() > 1.0)
        grad[outside] = 0.0
        # (the line above zeroes the one shared cell: every element's gradient becomes 0)
        return grad


x = torch.tensor([0.5, 2.0, -0.3, -4.0], requires_grad=True)
HardTanhSTE.apply(x).sum().backward()
expected = torch.tensor([1.0, 0.0, 1.0, 0.0])
if not torch.equal(x.grad, expected):
    print("MISMATCH: x.grad is", x.grad.tolist(), "expected", expected.tolist())
