# source: DANN gradient-reversal layers written as an autograd.Function whose backward returns a gradient for every forward argument, including the float coefficient (forum threads "returned a gradient different than None at position 2, but the corresponding forward input was not a Variable"): a non-tensor input must get None
# family: F
# expect: error
# line: 21  (backward: 29)
# fix: return None for the non-tensor input: return -ctx.lam * grad_out, None
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_out):
        return -ctx.lam * grad_out, grad_out.new_tensor(ctx.lam)


if __name__ == "__main__":
    feat = nn.Linear(6, 8)
    domain = nn.Linear(8, 2)
    x, d = torch.randn(10, 6), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(domain(GradReverse.apply(feat(x), 0.5)), d)
    loss.backward()
    print("grad", feat.weight.grad.norm().item())
