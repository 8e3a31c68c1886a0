# source: "gradient clipping layer" custom Functions (identity forward, grad_output.clamp_() in backward) placed on a residual branch; AddBackward hands the same gradient tensor to both branches
# family: F
# expect: ok
# verify: (fixed: the clamp is out-of-place) the in-place clamp_ in backward also clips the gradient that the add passed to the skip connection (same tensor), so x.grad differs from the out-of-place clamp; MISMATCH is printed
# line: 19  (backward: 48)
# fix: (fixed version of F33_gradient_clip_function_inplace_in_residual.py) clamp out-of-place in backward: return grad_output.clamp(-ctx.bound, ctx.bound)
import torch
import torch.nn as nn


class ClipGradient(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.bound = bound
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clamp(-ctx.bound, ctx.bound), None


class ClipGradientRef(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bound):
        ctx.bound = bound
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.clamp(-ctx.bound, ctx.bound), None


class ResidualBlock(nn.Module):
    def __init__(self, d=8, clip=ClipGradient):
        super().__init__()
        torch.manual_seed(0)
        self.branch = nn.Sequential(nn.Linear(d, d), nn.Tanh(), nn.Linear(d, d))
        self.clip = clip

    def forward(self, x):
        h = 3.0 * x
        return h + self.clip.apply(self.branch(h), 0.01)


def input_grad(clip):
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    w = torch.randn(4, 8, generator=torch.Generator().manual_seed(2))
    (ResidualBlock(clip=clip)(x) * w).sum().backward()
    return x.grad


if __name__ == "__main__":
    got, ref = input_grad(ClipGradient), input_grad(ClipGradientRef)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
