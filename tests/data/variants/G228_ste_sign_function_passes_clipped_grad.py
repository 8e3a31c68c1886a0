# source: the straight-through binarization of https://github.com/itayhubara/BinaryNet.pytorch (see https://github.com/itayhubara/BinaryNet.pytorch/issues/25: "I think the gradient will be set to 1") written as a custom Function that follows the "Extending torch.autograd" recipe with the weight's own needs_input_grad flag
# family: G
# expect: ok
# line: 23
# fix: none needed - backward returns a gradient for the weight (clipped straight-through) and None for the constant scale
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SignSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, alpha):
        ctx.save_for_backward(weight)
        return torch.sign(weight) * alpha

    @staticmethod
    def backward(ctx, grad_output):
        (weight,) = ctx.saved_tensors
        grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_weight = grad_output * (weight.abs() <= 1).type_as(grad_output)
        return grad_weight, None


class BinaryLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, SignSTE.apply(self.weight, self.weight.detach().abs().mean().item()), self.bias)


if __name__ == "__main__":
    model = nn.Sequential(BinaryLinear(10, 16), nn.Hardtanh(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model[0].weight.detach().clone()
    for step in range(3):
        x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
    print("MATCH" if not torch.equal(before, model[0].weight) else "MISMATCH: the latent weights never moved")
