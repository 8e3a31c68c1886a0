# source: lucidrains/lion-pytorch (Lion optimizer: @torch.no_grad() def step(...); p.data.mul_(1 - lr * wd); p.add_(update.sign_(), alpha=-lr)) and other hand-written optimizers that update parameters in place inside a no_grad-decorated step
# family: G
# expect: ok
# line: 29, 31
# fix: none needed - step() is decorated with @torch.no_grad(), so the in-place updates of the leaf parameters are allowed, and they happen after backward, before the next forward
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer

torch.manual_seed(0)


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99), weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                update = exp_avg.mul(beta1).add_(p.grad, alpha=1 - beta1)
                p.add_(update.sign_(), alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))
    opt = Lion(model.parameters(), lr=1e-3, weight_decay=0.01)
    for step in range(4):
        x, y = torch.randn(32, 8), torch.randn(32, 1)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
