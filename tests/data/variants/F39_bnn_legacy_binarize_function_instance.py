# source: binarized-network repos written against the pre-0.4 Function API (non-static forward/backward, `binarize = BinarizeF(); binarize(w)`), which now raises "Legacy autograd function with non-static forward method is deprecated"
# family: F
# expect: error
# line: 15, 27
# fix: use the new-style API: @staticmethod forward(ctx, input) / backward(ctx, grad_output) and call BinarizeF.apply(...)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

torch.manual_seed(0)


class BinarizeF(Function):
    def forward(self, input):
        return input.sign()

    def backward(self, grad_output):
        return grad_output


binarize = BinarizeF()


class BinaryLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, binarize(self.weight), self.bias)


if __name__ == "__main__":
    model = nn.Sequential(BinaryLinear(8, 16), nn.BatchNorm1d(16), nn.Hardtanh(), BinaryLinear(16, 2))
    x, y = torch.randn(6, 8), torch.randint(0, 2, (6,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print("loss", loss.item())
