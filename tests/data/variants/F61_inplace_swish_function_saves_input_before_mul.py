# source: "in-place memory-efficient Swish" autograd.Functions (variants of EfficientNet-PyTorch's SwishImplementation made in-place with ctx.mark_dirty) that call save_for_backward(x) and then overwrite x with x * sigmoid(x); the saved tensor is the returned output, so backward evaluates the derivative at the activation instead of the pre-activation
# family: F
# expect: silent
# line: 16, 17  (backward: 45)
# fix: keep the pre-activation: save x before overwriting it by saving a copy (ctx.save_for_backward(x.clone())) or compute the output out-of-place (return x * torch.sigmoid(x), no mark_dirty)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InplaceSwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        x.mul_(torch.sigmoid(x))
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        s = torch.sigmoid(x)
        return grad_output * (s * (1 + x * (1 - s)))


class InplaceSwish(nn.Module):
    def forward(self, x):
        return InplaceSwishFn.apply(x)


def mbconv_like(act):
    return nn.Sequential(
        nn.Linear(12, 24), nn.BatchNorm1d(24), act,
        nn.Linear(24, 24), nn.BatchNorm1d(24), act,
        nn.Linear(24, 3),
    )


def input_grad(act):
    torch.manual_seed(0)
    net = mbconv_like(act)
    x = torch.randn(8, 12, generator=torch.Generator().manual_seed(1), requires_grad=True)
    net(x).pow(2).sum().backward()
    return x.grad


if __name__ == "__main__":
    got = input_grad(InplaceSwish())
    ref = input_grad(nn.SiLU())
    print("MATCH" if torch.allclose(got, ref, atol=1e-5) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
