# source: PINN training loops that keep one collocation tensor with requires_grad=True and resample its t/x columns in place each epoch inside torch.no_grad(), then differentiate the residual with autograd.grad(create_graph=True)
# family: G
# expect: ok
# line: 30, 31
# fix: none needed - in-place writes to a leaf (and its column views) are allowed under no_grad, and the previous epoch's graph that saved the points was already consumed by its backward
import torch
import torch.nn as nn

torch.manual_seed(0)

T_MAX, X_MAX, KAPPA = 1.0, 2.0, 0.1


def residual(net, pts):
    u = net(pts)
    du = torch.autograd.grad(u.sum(), pts, create_graph=True)[0]
    u_t, u_x = du[:, 0:1], du[:, 1:2]
    u_xx = torch.autograd.grad(u_x.sum(), pts, create_graph=True)[0][:, 1:2]
    return u_t - KAPPA * u_xx


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 1))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    pts = torch.zeros(64, 2, requires_grad=True)
    x0 = torch.linspace(-X_MAX, X_MAX, 16).unsqueeze(1)
    ic = torch.cat([torch.zeros_like(x0), x0], 1)
    for epoch in range(3):
        with torch.no_grad():
            pts[:, 0].uniform_(0.0, T_MAX)
            pts[:, 1].uniform_(-X_MAX, X_MAX)
        loss = residual(net, pts).pow(2).mean() + (net(ic) - torch.sin(x0)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
