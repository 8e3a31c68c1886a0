from torch.autograd import Function


class GradientReversal(Function):
    @staticmethod
    def forward(ctx, x, lambda_):
        ctx.lambda_ = lambda_
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.lambda_ * grad_output, None


def reverse(x, lambda_=1.0):
    return GradientReversal.apply(x, lambda_)
