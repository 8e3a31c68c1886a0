# source: training loops that log the gradient norm with torch.autograd.grad(loss, params) before loss.backward(); autograd.grad frees the graph unless retain_graph=True
# family: D
# expect: ok
# line: 20  (backward: 27)
# fix: (fixed version of D35_grad_norm_logging_autograd_grad.py) torch.autograd.grad(loss, params, retain_graph=True) (or log the norm of p.grad after loss.backward())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.history = []

    def grad_norm(self, loss):
        grads = torch.autograd.grad(loss, list(self.model.parameters()), retain_graph=True)
        return torch.norm(torch.stack([g.norm() for g in grads])).item()

    def step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        self.history.append(self.grad_norm(loss))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


if __name__ == "__main__":
    tr = Trainer()
    print("loss", tr.step(torch.randn(8, 6), torch.randn(8, 1)), "grad norm", tr.history)
