# source: PACT-style quantisation with a learnable clipping level alpha written as an autograd.Function whose backward returns (grad_x, None) (forum threads "alpha is not updated", "custom Function parameter grad is None"): None tells autograd the input gets no gradient, so the Parameter alpha never trains
# family: H
# expect: ok
# verify: the clipping level alpha is compared before and after the steps
# line: 24
# fix: (fixed version of H157_pact_clip_function_returns_none_for_its_learnable_clipping_level.py) return alpha's gradient: the sum of grad_out where the input was clipped, (grad_out * (x >= alpha)).sum().reshape(alpha.shape)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PACTClip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.save_for_backward(x, alpha)
        return torch.minimum(torch.relu(x), alpha)

    @staticmethod
    def backward(ctx, grad_out):
        x, alpha = ctx.saved_tensors
        grad_x = grad_out * ((x > 0) & (x < alpha)).float()
        return grad_x, (grad_out * (x >= alpha).float()).sum().reshape(alpha.shape)


class PACTNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.alpha = nn.Parameter(torch.tensor(1.0))
        self.fc2 = nn.Linear(16, 1)

    def forward(self, x):
        return self.fc2(PACTClip.apply(self.fc1(x) * 3, self.alpha))


if __name__ == "__main__":
    model = PACTNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(32, 6), torch.randn(32, 1)
    before = model.alpha.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: alpha never moves" if torch.equal(before, model.alpha) else "MATCH")
