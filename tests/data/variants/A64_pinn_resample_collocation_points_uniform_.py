# source: physics-informed NN tutorials (1-D Poisson with random collocation resampling): the collocation tensor is created with requires_grad=True for the autograd PDE residual and later refreshed in place with x_col.uniform_()
# family: A
# expect: error
# line: 32
# fix: resample a fresh leaf: x_col = torch.rand(N_COL, 1, requires_grad=True) (or refresh it under torch.no_grad())
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

N_COL = 64

net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
opt = torch.optim.Adam(net.parameters(), lr=1e-3)

x_col = torch.rand(N_COL, 1, requires_grad=True)
x_bc = torch.tensor([[0.0], [1.0]])


def pde_residual(x):
    u = net(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    return d2u + math.pi ** 2 * torch.sin(math.pi * x)


for epoch in range(6):
    if epoch > 0 and epoch % 2 == 0:
        # random resampling of the collocation points every other epoch
        x_col.uniform_(0.0, 1.0)
    opt.zero_grad()
    loss = pde_residual(x_col).pow(2).mean() + net(x_bc).pow(2).mean()
    loss.backward()
    opt.step()
    print("epoch", epoch, "loss", round(loss.item(), 4))
