# source: DeCov / feature-decorrelation regularisers that capture the input of the classifier with a forward pre-hook (forum threads "regularisation on hooked activations does nothing"): the pre-hook stores args[0].detach(), so the covariance penalty is a constant
# family: H
# expect: ok
# verify: the first layer's weight gradient is compared with the gradient of the task loss alone
# line: 23  (backward: 40)
# fix: (fixed version of H108_decov_penalty_reads_a_pre_hook_copy_detached.py) store the live input in the pre-hook: self.seen["h"] = args[0]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeCovNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.out = nn.Linear(16, 2)
        self.seen = {}
        self.out.register_forward_pre_hook(self._grab)

    def _grab(self, module, args):
        self.seen["h"] = args[0]

    def forward(self, x):
        return self.out(self.body(x))


def decov(h):
    c = h - h.mean(0, keepdim=True)
    cov = c.t() @ c / h.shape[0]
    return 0.5 * (cov.pow(2).sum() - cov.diagonal().pow(2).sum())


if __name__ == "__main__":
    net = DeCovNet()
    x = torch.randn(32, 10)
    y = torch.randint(0, 2, (32,))
    loss = F.cross_entropy(net(x), y) + 0.5 * decov(net.seen["h"])
    loss.backward()
    task_only = torch.autograd.grad(F.cross_entropy(net(x), y), net.body[0].weight)[0]
    same = torch.allclose(net.body[0].weight.grad, task_only)
    print("loss %.4f" % loss.item())
    print("MISMATCH: the decorrelation term adds no gradient" if same else "MATCH")
