# source: PACT / QAT activation quantizers written as custom Functions that clamp their input in place in forward to save memory (the input is the ReLU output that ReluBackward needs)
# family: F
# expect: error
# line: 16  (backward: 45)
# fix: clamp out-of-place inside forward: x = x.clamp(0, clip_val) (a Function must not modify its inputs unless it calls ctx.mark_dirty and returns them)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ActQuant(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, clip_val, bits):
        x.clamp_(0, clip_val)
        ctx.save_for_backward(x)
        ctx.clip_val = clip_val
        scale = (2 ** bits - 1) / clip_val
        return torch.round(x * scale) / scale

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        mask = (x > 0) & (x < ctx.clip_val)
        return grad_output * mask, None, None


class QuantMLP(nn.Module):
    def __init__(self, d_in=10, hidden=16, n_cls=3, clip_val=1.0, bits=4):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, n_cls)
        self.clip_val, self.bits = clip_val, bits

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(ActQuant.apply(h, self.clip_val, self.bits))


if __name__ == "__main__":
    model = QuantMLP()
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    print("loss", loss.item())
