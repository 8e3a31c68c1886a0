# source: forum "compute the Jacobian row by row": torch.autograd.grad(y[:, i].sum(), x) in a loop over outputs without retain_graph (the first call frees the shared graph)
# family: D
# expect: ok
# line: 17
# fix: (fixed version of D38_jacobian_rows_autograd_grad_loop.py) torch.autograd.grad(y[:, i].sum(), x, retain_graph=True) (or use torch.autograd.functional.jacobian)
import torch
import torch.nn as nn

torch.manual_seed(0)


def input_jacobian(model, x):
    x = x.clone().requires_grad_(True)
    y = model(x)
    rows = []
    for i in range(y.size(1)):
        g, = torch.autograd.grad(y[:, i].sum(), x, retain_graph=True)
        rows.append(g)
    return torch.stack(rows, dim=1)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(3, 8), nn.Softplus(), nn.Linear(8, 2))
    J = input_jacobian(model, torch.randn(5, 3))
    print("jacobian", tuple(J.shape))
