# source: https://discuss.pytorch.org/t/efficient-calculation-of-derivatives-for-pinn-solvers-in-pytorch/177249 (a diff(y, xs) helper that chains torch.autograd.grad over the inputs to write PDE residuals, with grad_outputs=torch.ones_like(y)); written without grad_outputs the network's (N, 1) output makes autograd.grad raise "grad can be implicitly created only for scalar outputs"
# family: H
# expect: ok
# line: 27
# fix: (fixed version of H62_pinn_residual_derivative_helper_without_grad_outputs.py) contract the per-point outputs with ones: torch.autograd.grad(grad, x, grad_outputs=torch.ones_like(grad), create_graph=True)[0]
import math

import torch
import torch.nn as nn

torch.manual_seed(0)


class PINN(nn.Module):
    def __init__(self, hidden=20):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, x, t):
        return self.net(torch.cat([x, t], dim=1))


def diff(y, xs):
    """d^n y / dxs[0] ... dxs[n-1]"""
    grad = y
    for x in xs:
        grad = torch.autograd.grad(grad, x, grad_outputs=torch.ones_like(grad), create_graph=True)[0]
    return grad


def heat_residual(model, x, t, alpha=0.1):
    u = model(x, t)
    return diff(u, [t]) - alpha * diff(u, [x, x])


if __name__ == "__main__":
    model = PINN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    n = 64
    x = torch.rand(n, 1, requires_grad=True)
    t = torch.rand(n, 1, requires_grad=True)
    x0 = torch.rand(n, 1)
    for epoch in range(3):
        pde = heat_residual(model, x, t).pow(2).mean()
        ic = (model(x0, torch.zeros_like(x0)) - torch.sin(math.pi * x0)).pow(2).mean()
        loss = pde + ic
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("epoch", epoch, "pde %.5f ic %.5f" % (pde.item(), ic.item()))
