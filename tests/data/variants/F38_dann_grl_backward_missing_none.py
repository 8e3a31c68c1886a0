# source: DANN gradient-reversal layers whose backward returns only the reversed gradient although forward takes (x, lambd) ("returned an incorrect number of gradients (expected 2, got 1)")
# family: F
# expect: error
# line: 22  (backward: 46)
# fix: return one gradient per forward input: return grad_output.neg() * ctx.lambd, None
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

torch.manual_seed(0)


class GradReverse(Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd


class DANN(nn.Module):
    def __init__(self, d_in=12, d_feat=16, n_cls=4):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(d_in, d_feat), nn.ReLU())
        self.label_clf = nn.Linear(d_feat, n_cls)
        self.domain_clf = nn.Sequential(nn.Linear(d_feat, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x, lambd=1.0):
        f = self.feature(x)
        return self.label_clf(f), self.domain_clf(GradReverse.apply(f, lambd))


if __name__ == "__main__":
    model = DANN()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    xs, ys, xt = torch.randn(6, 12), torch.randint(0, 4, (6,)), torch.randn(6, 12)
    cls_s, dom_s = model(xs, 0.3)
    _, dom_t = model(xt, 0.3)
    loss = F.cross_entropy(cls_s, ys) + F.cross_entropy(dom_s, torch.zeros(6, dtype=torch.long)) \
        + F.cross_entropy(dom_t, torch.ones(6, dtype=torch.long))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
