# source: quantization-aware training with a clamp whose gradient is passed straight through (PACT / DoReFa re-implementations; forum threads "function ClampSTEBackward returned an incorrect number of gradients"): forward takes (x, lo, hi), backward returns only grad_output
# family: F
# expect: ok
# line: 20  (backward: 37)
# fix: (fixed version of F205_pact_clamp_ste_function_returns_one_gradient_for_three_inputs.py) return one gradient per forward input: return grad_output, None, None
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ClampSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lo, hi):
        return torch.round(x.clamp(lo, hi) * 7) / 7

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None, None


class QuantMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 3)

    def forward(self, x):
        return self.fc2(ClampSTE.apply(F.relu(self.fc1(x)), 0.0, 1.0))


if __name__ == "__main__":
    model = QuantMLP()
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print("loss %.4f" % loss.item())
