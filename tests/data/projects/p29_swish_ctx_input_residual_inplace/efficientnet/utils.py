"""A memory-efficient Swish (after lukemelas/EfficientNet-PyTorch utils.py), keeping the input
on ctx instead of saving it for backward."""
import torch
import torch.nn as nn


class SwishImplementation(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        ctx.i = i
        return i * torch.sigmoid(i)

    @staticmethod
    def backward(ctx, grad_output):
        i = ctx.i
        sigmoid_i = torch.sigmoid(i)
        return grad_output * (sigmoid_i * (1 + i * (1 - sigmoid_i)))


class MemoryEfficientSwish(nn.Module):
    def forward(self, x):
        return SwishImplementation.apply(x)
