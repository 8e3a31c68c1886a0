# source: activation-statistics regularisers (DeCov, feature whitening) that capture a layer's input with a forward pre-hook: the live input is kept for the penalty and a detached copy only for a histogram log
# family: G
# expect: ok
# line: 23
# fix: none needed: the penalty reads the live input; only the logged copy is detached
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StatsNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.out = nn.Linear(16, 2)
        self.live, self.logged = {}, []
        self.out.register_forward_pre_hook(self._grab)

    def _grab(self, module, args):
        self.live["h"] = args[0]
        self.logged.append(args[0].detach().mean(0))

    def forward(self, x):
        return self.out(self.body(x))


def covariance_penalty(h):
    c = h - h.mean(0, keepdim=True)
    cov = c.t() @ c / h.shape[0]
    return 0.5 * (cov.pow(2).sum() - cov.diagonal().pow(2).sum())


if __name__ == "__main__":
    net = StatsNet()
    x, y = torch.randn(32, 10), torch.randint(0, 2, (32,))
    loss = F.cross_entropy(net(x), y) + 0.5 * covariance_penalty(net.live["h"])
    loss.backward()
    task_only = torch.autograd.grad(F.cross_entropy(net(x), y), net.body[0].weight)[0]
    print("logged %d means, loss %.4f" % (len(net.logged), loss.item()))
    print("MISMATCH: the penalty adds no gradient" if torch.allclose(net.body[0].weight.grad, task_only) else "MATCH")
