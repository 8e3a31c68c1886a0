# source: learn2learn MAML.adapt(allow_unused=True) (https://github.com/learnables/learn2learn/issues/363): parameters outside the task graph get None gradients, which the functional update skips
# family: G
# expect: ok
# line: 30
# fix: none needed - allow_unused=True makes the unused head's gradient None and the update keeps that parameter
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)
        self.unused_head = nn.Linear(16, 3)

    def forward(self, x):
        return self.head(self.body(x))


if __name__ == "__main__":
    net = Net()
    meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    names, params = zip(*net.named_parameters())
    x_s, y_s, x_q, y_q = torch.randn(5, 6), torch.randint(0, 3, (5,)), torch.randn(5, 6), torch.randint(0, 3, (5,))
    grads = torch.autograd.grad(F.cross_entropy(net(x_s), y_s), params, create_graph=True, allow_unused=True)
    fast = {n: p if g is None else p - 0.4 * g for n, p, g in zip(names, params, grads)}
    query_loss = F.cross_entropy(functional_call(net, fast, (x_q,)), y_q)
    meta_opt.zero_grad()
    query_loss.backward()
    meta_opt.step()
    print("query loss", query_loss.item())
