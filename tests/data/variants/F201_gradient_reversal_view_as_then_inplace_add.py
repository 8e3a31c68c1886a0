# source: https://github.com/ccarliu/m3ae/issues/15 ("A view was created ... inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward"): DANN-style gradient reversal layers return x.view_as(x), and the reversed features are then updated in place
# family: F
# expect: error
# line: 17, 35
# fix: return a new tensor from the Function (x.clone()), or update the reversed features out of place
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lambd):
        ctx.lambd = lambd
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.lambd, None


class DomainAdversarialNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.feature = nn.Sequential(nn.Linear(12, 16), nn.ReLU())
        self.label_clf = nn.Linear(16, 3)
        self.domain_clf = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 2))
        self.domain_bias = nn.Parameter(torch.zeros(16))

    def forward(self, x, lambd):
        f = self.feature(x)
        reversed_f = GradReverse.apply(f, lambd)
        reversed_f += self.domain_bias
        return self.label_clf(f), self.domain_clf(reversed_f)


if __name__ == "__main__":
    net = DomainAdversarialNet()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    xs, ys, domains = torch.randn(8, 12), torch.randint(0, 3, (8,)), torch.randint(0, 2, (8,))
    cls, dom = net(xs, 0.5)
    loss = F.cross_entropy(cls, ys) + F.cross_entropy(dom, domains)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
