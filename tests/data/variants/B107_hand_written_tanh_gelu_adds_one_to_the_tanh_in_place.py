# source: hand-written tanh-approximation GELU (GPT-2 style ports) that computes t = torch.tanh(...) and then t += 1 before 0.5 * x * t (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.FloatTensor] ... TanhBackward0"): tanh saves its output for the backward, and the in-place add changes it
# family: B
# expect: error
# line: 15  (backward: 33)
# fix: add out of place: t = t + 1.0
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def gelu_tanh(x):
    t = torch.tanh(0.7978845608 * (x + 0.044715 * x.pow(3)))
    t += 1.0
    return 0.5 * x * t


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        return self.fc2(gelu_tanh(self.fc1(x)))


if __name__ == "__main__":
    mlp = MLP()
    x, y = torch.randn(10, 8), torch.randn(10, 8)
    loss = F.mse_loss(mlp(x), y)
    loss.backward()
    print("grad", mlp.fc1.weight.grad.norm().item())
