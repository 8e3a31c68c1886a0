# fix-kind: none_gradient
# why: every input that gets a gradient is a tensor; the non-tensor input already gets None.
import torch


class Focal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, p, gamma):
        ctx.save_for_backward(p)
        ctx.gamma = gamma
        return -((1 - p) ** gamma * torch.log(p)).sum()

    @staticmethod
    def backward(ctx, g):
        p, = ctx.saved_tensors
        gamma = ctx.gamma
        d = gamma * (1 - p) ** (gamma - 1) * torch.log(p) - (1 - p) ** gamma / p
        return g * d, None


torch.manual_seed(0)
p = torch.rand(5).clamp(0.1, 0.9).requires_grad_()
loss = Focal.apply(p, 2.0)
loss.backward()
print(f"{loss.item():.6f} {p.grad.sum().item():.6f}")
