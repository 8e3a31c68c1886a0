# source: pytorch docs "Extending torch.autograd" (ctx.mark_dirty): a custom in-place clipping Function applied to a Linear output, as in memory-saving BNN activations
# family: G
# expect: ok
# line: 19  (backward: 39)
# fix: none needed - the Function declares its in-place write with ctx.mark_dirty, saves the mask it needs, and the tensor it modifies is a Linear output that no backward saved
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InplaceHardtanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = (x > -1) & (x < 1)
        ctx.save_for_backward(mask)
        ctx.mark_dirty(x)
        return x.clamp_(-1, 1)

    @staticmethod
    def backward(ctx, grad_output):
        mask, = ctx.saved_tensors
        return grad_output * mask


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(6, 16), nn.Linear(16, 3)

    def forward(self, x, act):
        return self.fc2(act(self.fc1(x)))


if __name__ == "__main__":
    net = Net()
    x = torch.randn(8, 6) * 3
    net(x, InplaceHardtanh.apply).pow(2).sum().backward()
    got = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    net(x, F.hardtanh).pow(2).sum().backward()
    ok = all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(got, net.parameters()))
    print("MATCH" if ok else "MISMATCH")
