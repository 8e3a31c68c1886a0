# source: https://github.com/itayhubara/BinaryNet.pytorch/issues/6 ("no backward pass?": "i'm printing the weights of the network and they are not changing"); the custom Function follows the "Extending torch.autograd" recipe (compute a gradient only if ctx.needs_input_grad[i]) but tests the index of the scale argument instead of the weight's, so it returns None for the weight
# family: F
# expect: ok
# verify: the latent weights' gradient is compared with autograd's gradient of the same straight-through estimator written with tensor ops
# line: 26  (backward: 54)
# fix: (fixed version of F202_binarize_function_checks_wrong_needs_input_grad.py) test the weight's own flag: if ctx.needs_input_grad[0]: grad_weight = grad_output * (weight.abs() <= 1)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinarizeWeight(torch.autograd.Function):
    """sign(w) * alpha in forward; straight-through (clipped to |w| <= 1) in backward."""

    @staticmethod
    def forward(ctx, weight, alpha):
        ctx.save_for_backward(weight)
        return torch.sign(weight) * alpha

    @staticmethod
    def backward(ctx, grad_output):
        (weight,) = ctx.saved_tensors
        grad_weight = grad_alpha = None
        if ctx.needs_input_grad[0]:
            grad_weight = grad_output * (weight.abs() <= 1).type_as(grad_output)
        return grad_weight, grad_alpha


class BinaryLinear(nn.Linear):
    def forward(self, x):
        alpha = self.weight.detach().abs().mean().item()
        return F.linear(x, BinarizeWeight.apply(self.weight, alpha), self.bias)


class BinaryMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = BinaryLinear(10, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(F.hardtanh(self.fc1(x)))


if __name__ == "__main__":
    model = BinaryMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(3):
        x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    x, y = torch.randn(32, 10), torch.randint(0, 3, (32,))
    model.zero_grad()
    F.cross_entropy(model(x), y).backward()
    got = model.fc1.weight.grad
    w = model.fc1.weight
    alpha = w.detach().abs().mean()
    w_ste = (torch.sign(w) * alpha).detach() + (w - w.detach()) * (w.detach().abs() <= 1)
    ref_loss = F.cross_entropy(model.fc2(F.hardtanh(F.linear(x, w_ste, model.fc1.bias))), y)
    (ref,) = torch.autograd.grad(ref_loss, w)
    if got is not None and torch.allclose(got, ref, atol=1e-6):
        print("MATCH")
    else:
        print("MISMATCH: the latent weights got", "no gradient" if got is None else "a wrong gradient", "from BinarizeWeight.backward")
