# from: the same tuple arithmetic as gw307_tuple_concat.py and gw307_helper_staticmethod.py, one
#       gradient short: counting through tuple arithmetic and calls still finds it
# expect: GW307 error 26
# torch: raises
import torch


def exchange_both(to_left, to_right):
    return to_right.flip(0), to_left.flip(0)


class ExchangeBoth(torch.autograd.Function):
    @staticmethod
    def forward(ctx, src, dst, group, to_left, to_right):
        return exchange_both(to_left, to_right)

    @staticmethod
    def _grads(g):
        return g.flip(0), g.flip(0)

    @staticmethod
    def backward(ctx, *grad_outputs):
        # the first return gives 2 + 3 gradients; the second (None,) * 2 + 2: one short of 5
        if len(grad_outputs) > 5:
            return ExchangeBoth._grads(grad_outputs[0]) + (None, None, None)
        return (None,) * 2 + ExchangeBoth.apply(0, 0, None, *grad_outputs)


left = torch.randn(4, requires_grad=True)
right = torch.randn(4, requires_grad=True)
u, v = ExchangeBoth.apply(0, 1, None, left, right)
(u.sum() + v.sum()).backward()
