# from: gpytorch 1.15.2, gpytorch/variational/natural_variational_distribution.py:147
# pattern: backward returns `Cls._helper(...)`, a staticmethod that returns one gradient per input
# expect: quiet
# torch: ok
import torch


class NaturalToMean(torch.autograd.Function):
    @staticmethod
    def forward(ctx, nat_mean, nat_covar):
        ctx.save_for_backward(nat_mean, nat_covar)
        return nat_mean * 2, nat_covar * 3

    @staticmethod
    def _backward(d_mean, d_covar, nat_mean, nat_covar):
        return d_mean * 2, d_covar * 3

    @staticmethod
    def backward(ctx, d_mean, d_covar):
        nat_mean, nat_covar = ctx.saved_tensors
        return NaturalToMean._backward(d_mean, d_covar, nat_mean, nat_covar)


a = torch.randn(3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
mu, cov = NaturalToMean.apply(a, b)
(mu.sum() + cov.sum()).backward()
if not (torch.allclose(a.grad, torch.full((3,), 2.0)) and torch.allclose(b.grad, torch.full((3,), 3.0))):
    print("MISMATCH")
