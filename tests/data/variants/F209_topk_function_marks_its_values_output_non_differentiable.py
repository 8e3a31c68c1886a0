# source: custom autograd.Functions that return (values, indices) and call ctx.mark_non_differentiable on both outputs, copied from the indices-only case (forum threads "element 0 of tensors does not require grad" with a custom top-k / sort Function): the values output is then cut from the graph, and a loss made only from it cannot backward
# family: F
# expect: error
# line: 18  (backward: 32)
# fix: mark only the indices: ctx.mark_non_differentiable(idx)
import torch
import torch.nn as nn

torch.manual_seed(0)


class TopK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        vals, idx = x.topk(k, dim=-1)
        ctx.save_for_backward(idx)
        ctx.shape = x.shape
        ctx.mark_non_differentiable(vals, idx)
        return vals, idx

    @staticmethod
    def backward(ctx, grad_vals, grad_idx):
        (idx,) = ctx.saved_tensors
        return grad_vals.new_zeros(ctx.shape).scatter(-1, idx, grad_vals), None


if __name__ == "__main__":
    fc = nn.Linear(6, 10)
    x = torch.randn(4, 6)
    vals, idx = TopK.apply(fc(x), 3)
    loss = vals.pow(2).mean()
    loss.backward()
    print("grad", fc.weight.grad.norm().item())
