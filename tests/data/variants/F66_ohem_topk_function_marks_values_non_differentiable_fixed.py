# source: (fixed version of F66_ohem_topk_function_marks_values_non_differentiable.py) online hard example mining (OHEM) losses built on a custom top-k autograd.Function that calls ctx.mark_non_differentiable on both outputs (values and indices) instead of only the indices; the mined loss then has no grad_fn and backward fails with "element 0 of tensors does not require grad and does not have a grad_fn"
# family: F
# expect: ok
# line: 19  (backward: 50)
# fix: mark only the index output as non-differentiable: ctx.mark_non_differentiable(idx)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TopK(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        values, idx = x.topk(k)
        ctx.save_for_backward(idx)
        ctx.input_shape = x.shape
        ctx.mark_non_differentiable(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        idx, = ctx.saved_tensors
        grad_x = grad_values.new_zeros(ctx.input_shape)
        grad_x.scatter_(0, idx, grad_values)
        return grad_x, None


class OHEMCrossEntropy(nn.Module):
    def __init__(self, keep_ratio=0.25):
        super().__init__()
        self.keep_ratio = keep_ratio

    def forward(self, logits, target):
        per_sample = F.cross_entropy(logits, target, reduction="none")
        k = max(1, int(self.keep_ratio * per_sample.numel()))
        hard, _ = TopK.apply(per_sample, k)
        return hard.mean()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 5))
    criterion = OHEMCrossEntropy()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x, y = torch.randn(32, 16), torch.randint(0, 5, (32,))
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "hard loss %.4f" % loss.item())
