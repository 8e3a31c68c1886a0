# expect: error
# line: 18
# Re-initialising a parameter in place while autograd records: parameters are leaves that
# require grad, and PyTorch refuses in-place changes to them outside `torch.no_grad()`.
import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n))
        self.reset_parameters()

    def reset_parameters(self):
        # nn.init.ones_(self.weight) would be fine: nn.init runs under no_grad.
        # Fix: wrap the next line in `with torch.no_grad():`
        self.weight.fill_(1.0)

    def forward(self, x):
        return x * self.weight


model = Scale(4)
model(torch.randn(2, 4)).sum().backward()
print(model.weight.grad)
