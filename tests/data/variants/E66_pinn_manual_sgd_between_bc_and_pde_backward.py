# source: physics-informed neural network (PINN) tutorials written with a d2l-style hand-written sgd(params, lr) (p -= lr * p.grad under torch.no_grad()) that alternate a boundary-condition update and a PDE-residual update, computing both losses at the top of the iteration
# family: E
# expect: error
# line: 19, 44  (backward: 46)
# fix: compute the PDE residual loss after the boundary update (fresh forward), or backward both losses before calling sgd()
import math
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))


def sgd(params, lr):
    with torch.no_grad():
        for p in params:
            if p.grad is not None:
                p -= lr * p.grad
                p.grad = None


def pde_residual_loss(x):
    x = x.clone().requires_grad_(True)
    u = net(x)
    u_x, = torch.autograd.grad(u.sum(), x, create_graph=True)
    u_xx, = torch.autograd.grad(u_x.sum(), x, create_graph=True)
    f = -(math.pi ** 2) * torch.sin(math.pi * x)
    return ((u_xx - f) ** 2).mean()


def boundary_loss():
    xb = torch.tensor([[0.0], [1.0]])
    return (net(xb) ** 2).mean()


x_col = torch.rand(64, 1)
lr = 1e-3
for it in range(3):
    loss_pde = pde_residual_loss(x_col)
    loss_bc = boundary_loss()

    loss_bc.backward()
    sgd(net.parameters(), lr)

    loss_pde.backward()
    sgd(net.parameters(), lr)
    print("iter %d  pde %.4f  bc %.4f" % (it, loss_pde.item(), loss_bc.item()))
