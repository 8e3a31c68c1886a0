"""An in-place activation as a custom Function (after mapillary/inplace_abn): the input buffer
is overwritten, declared with mark_dirty, and the backward is computed from the output."""
from torch.autograd import Function


class InPlaceLeakyReLU(Function):
    @staticmethod
    def forward(ctx, x, slope):
        ctx.slope = slope
        x.masked_scatter_(x < 0, x[x < 0] * slope)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        (y,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[y < 0] *= ctx.slope
        return grad_input, None


def inplace_leaky_relu(x, slope=0.01):
    return InPlaceLeakyReLU.apply(x, slope)
