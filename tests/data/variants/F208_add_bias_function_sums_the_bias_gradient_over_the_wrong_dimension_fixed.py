# source: hand-written fused bias-add / bias-activation autograd.Functions whose backward reduces the bias gradient over the wrong dimension (forum threads "Function AddBiasBackward returned an invalid gradient at index 1 - got [N] but expected shape compatible with [D]"): a gradient must have (or broadcast to) the shape of its input; summed over the features it has the batch's shape
# family: F
# expect: ok
# line: 20  (backward: 37)
# fix: (fixed version of F208_add_bias_function_sums_the_bias_gradient_over_the_wrong_dimension.py) reduce over the broadcast (batch) dimension: return grad_out, grad_out.sum(0)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AddBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.sum(0)


class BiasedProjection(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4, bias=False)
        self.bias = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return AddBias.apply(self.fc(x), self.bias)


if __name__ == "__main__":
    layer = BiasedProjection()
    x, y = torch.randn(8, 6), torch.randn(8, 4)
    loss = F.mse_loss(layer(x), y)
    loss.backward()
    print("bias grad", layer.bias.grad)
