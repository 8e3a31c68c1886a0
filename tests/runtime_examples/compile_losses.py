"""A small model trained with torch.compile: the losses must be those of a plain run. It has a
custom autograd Function that keeps a tensor on ``ctx`` (Dynamo traces its forward with a ctx of
its own: the bridge's hooks must stay out of that trace)."""
import sys

import torch
import torch.nn as nn



class SoftSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        ctx.slope = inp.abs() + 1.0
        return inp * ctx.slope

    @staticmethod
    def backward(ctx, grad):
        inp, = ctx.saved_tensors
        return grad * (ctx.slope + inp.sign() * inp)


class Act(nn.Module):
    def forward(self, x):
        return SoftSquare.apply(x)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), Act(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
# a backend name as the first argument (the tests use aot_eager: Dynamo and AOTAutograd, no C++ compiler)
compiled = torch.compile(model, backend=sys.argv[1] if len(sys.argv) > 1 else "inductor")
x = torch.randn(32, 8)
y = torch.randn(32, 1)
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(compiled(x), y)
    loss.backward()
    opt.step()
    print("step %d loss %.6f" % (step, loss.item()))
