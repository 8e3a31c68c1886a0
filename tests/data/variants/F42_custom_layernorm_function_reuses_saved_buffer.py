# source: hand-written LayerNorm autograd.Functions that save the centred input and then reuse that buffer in place for the normalised output (xmu.mul_(rstd)) to save memory
# family: F
# expect: silent
# verify: xmu is an intermediate created inside forward, and saving it raises no version-counter error when it is later modified (measured on torch 2.13); the in-place mul_ turns the saved centred input into x-hat and the custom backward silently uses it. The input gradient is compared with F.layer_norm and MISMATCH is printed
# line: 21  (backward: 53)
# fix: save the tensors after the last in-place write, or compute the output out-of-place: y = xmu * rstd
import torch
import torch.nn as nn

torch.manual_seed(0)


class LayerNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps=1e-5):
        mean = x.mean(-1, keepdim=True)
        xmu = x - mean
        var = (xmu ** 2).mean(-1, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        ctx.save_for_backward(xmu, rstd, weight)
        y = xmu.mul_(rstd)
        return y * weight + bias

    @staticmethod
    def backward(ctx, grad_out):
        xmu, rstd, weight = ctx.saved_tensors
        xhat = xmu * rstd
        g = grad_out * weight
        n = xhat.size(-1)
        grad_x = rstd / n * (n * g - g.sum(-1, keepdim=True) - xhat * (g * xhat).sum(-1, keepdim=True))
        dims = tuple(range(grad_out.dim() - 1))
        return grad_x, (grad_out * xhat).sum(dims), grad_out.sum(dims), None


class Block(nn.Module):
    def __init__(self, d=8, use_custom=True):
        super().__init__()
        torch.manual_seed(0)
        self.fc = nn.Linear(d, d)
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.use_custom = use_custom

    def forward(self, x):
        h = self.fc(x)
        if self.use_custom:
            return LayerNormFn.apply(h, self.weight, self.bias)
        return nn.functional.layer_norm(h, h.shape[-1:], self.weight, self.bias, 1e-5)


def input_grad(use_custom):
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1), requires_grad=True)
    Block(use_custom=use_custom)(x).pow(3).mean().backward()
    return x.grad


if __name__ == "__main__":
    got, ref = input_grad(True), input_grad(False)
    print("MATCH" if torch.allclose(got, ref, atol=1e-5) else "MISMATCH max diff %.4f" % (got - ref).abs().max().item())
