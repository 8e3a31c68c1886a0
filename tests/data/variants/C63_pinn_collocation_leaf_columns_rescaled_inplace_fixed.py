# source: physics-informed NN tutorials (heat / Burgers equation) that draw collocation points with torch.rand(..., requires_grad=True) and then rescale the t and x columns in place through slices of that leaf
# family: C
# expect: ok
# line: 18
# fix: (fixed version of C63_pinn_collocation_leaf_columns_rescaled_inplace.py) scale before turning on gradients: pts = torch.rand(n, 2); scale the columns; pts.requires_grad_(True)
import torch
import torch.nn as nn

torch.manual_seed(0)

T_MAX, X_MAX, KAPPA = 1.0, 2.0, 0.1


def sample_collocation(n):
    pts = torch.rand(n, 2)
    t = pts[:, 0:1]
    x = pts[:, 1:2]
    t.mul_(T_MAX)
    x.mul_(2 * X_MAX).sub_(X_MAX)
    return pts.requires_grad_(True)


def heat_residual(net, pts):
    u = net(pts)
    du = torch.autograd.grad(u.sum(), pts, create_graph=True)[0]
    u_t, u_x = du[:, 0:1], du[:, 1:2]
    u_xx = torch.autograd.grad(u_x.sum(), pts, create_graph=True)[0][:, 1:2]
    return u_t - KAPPA * u_xx


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x0 = torch.linspace(-X_MAX, X_MAX, 16).unsqueeze(1)
    ic_pts = torch.cat([torch.zeros_like(x0), x0], dim=1)
    for it in range(3):
        pts = sample_collocation(64)
        loss = heat_residual(net, pts).pow(2).mean() + (net(ic_pts) - torch.sin(x0)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
