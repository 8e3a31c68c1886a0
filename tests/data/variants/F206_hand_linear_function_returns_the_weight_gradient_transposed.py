# source: the "extending torch.autograd" LinearFunction re-implemented by hand (forum threads "returned an invalid gradient at index 1 - got [6, 4] but expected shape compatible with [4, 6]"): the weight is stored (out, in) and used as x.mm(weight.t()), but the backward returns x.t().mm(grad_output), the gradient of the transposed weight
# family: F
# expect: error
# line: 23  (backward: 41)
# fix: return the gradient in the weight's layout: grad_weight = grad_output.t().mm(x)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class HandLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x.mm(weight.t()) + bias

    @staticmethod
    def backward(ctx, grad_output):
        x, weight = ctx.saved_tensors
        grad_x = grad_output.mm(weight)
        grad_weight = x.t().mm(grad_output)
        return grad_x, grad_weight, grad_output.sum(0)


class TinyRegressor(nn.Module):
    def __init__(self, d=6, out=4):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out, d) * 0.3)
        self.bias = nn.Parameter(torch.zeros(out))

    def forward(self, x):
        return HandLinear.apply(x, self.weight, self.bias)


if __name__ == "__main__":
    model = TinyRegressor()
    x, y = torch.randn(8, 6), torch.randn(8, 4)
    loss = F.mse_loss(model(x), y)
    loss.backward()
    print("loss %.4f" % loss.item())
