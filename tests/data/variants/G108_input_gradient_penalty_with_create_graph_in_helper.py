# source: https://github.com/pytorch/pytorch/issues/7714 (gradient penalty on the input: autograd.grad(loss_c, x, create_graph=True, retain_graph=True) then (loss_c + loss_g).backward()), here wrapped in a helper that returns both terms
# family: G
# expect: ok
# line: 17
# fix: none needed - create_graph=True keeps the forward graph (retain_graph defaults to create_graph) and makes the penalty differentiable
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

torch.manual_seed(0)


def loss_with_input_gradient_penalty(net, x, y, weight=0.1):
    x = x.clone().requires_grad_(True)
    loss_c = F.cross_entropy(net(x), y)
    (grad,) = autograd.grad(loss_c, x, create_graph=True)
    loss_g = grad.pow(2).sum(dim=1).mean() * x.shape[0]
    return loss_c, weight * loss_g


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(12, 32), nn.Softplus(), nn.Linear(32, 3))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    for i in range(3):
        x, y = torch.rand(8, 12), torch.randint(0, 3, (8,))
        loss_c, loss_g = loss_with_input_gradient_penalty(net, x, y)
        opt.zero_grad()
        (loss_c + loss_g).backward()
        opt.step()
        print("step", i, "ce", loss_c.item(), "gp", loss_g.item())
