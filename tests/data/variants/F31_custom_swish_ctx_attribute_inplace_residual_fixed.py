# source: hand-written memory-efficient Swish Functions that keep the input as a ctx attribute (`ctx.x = x`) instead of save_for_backward; the caller later reuses the pre-activation buffer in place, and no version check fires
# family: F
# expect: ok
# verify: (fixed: the residual add is out-of-place) ctx.x bypasses the saved-tensor version check; `h += self.skip(x)` rewrites the tensor the custom backward reads, so the input gradient is computed at the wrong point. x.grad is compared with the same network using F.silu and an out-of-place residual and MISMATCH is printed
# line: 40  (backward: 46)
# fix: (fixed version of F31_custom_swish_ctx_attribute_inplace_residual.py) make the residual add out-of-place (h = h + self.skip(x)); with ctx.save_for_backward(x) torch would at least have raised instead of silently using the modified input
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x * torch.sigmoid(x)

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.x
        s = torch.sigmoid(x)
        return grad_output * (s * (1 + x * (1 - s)))


class SwishBlock(nn.Module):
    def __init__(self, d=8, act=SwishFn.apply, inplace_residual=True):
        super().__init__()
        self.inplace_residual = inplace_residual
        torch.manual_seed(0)
        self.fc1 = nn.Linear(d, d)
        self.skip = nn.Linear(d, d)
        self.fc2 = nn.Linear(d, d)
        self.act = act

    def forward(self, x):
        h = self.fc1(x)
        a = self.act(h)
        h = h + self.skip(x)
        return self.fc2(a) + h


def input_grad(act, inplace_residual):
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    SwishBlock(act=act, inplace_residual=inplace_residual)(x).pow(2).sum().backward()
    return x.grad


if __name__ == "__main__":
    got, ref = input_grad(SwishFn.apply, True), input_grad(F.silu, False)
    print("MATCH" if torch.allclose(got, ref, atol=1e-5) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
