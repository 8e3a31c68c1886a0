# source: learned step size quantization (LSQ, Esser et al. 2020) re-implemented with the one-line straight-through trick, the shape behind reports such as ZouJiu1/LSQplus#12 and zhutmost/lsq-net#23 about how the step size is trained: the whole quantize-dequantize, step size included, sits inside (q - x).detach(), so the learnable step size never gets a gradient
# family: H
# expect: silent
# verify: the step size's .grad after the training steps: None means it never trains
# line: 24
# fix: round with the straight-through trick on x / s and multiply by s outside the detach: return (v + (torch.round(v) - v).detach()) * s
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LsqActQuantizer(nn.Module):
    def __init__(self, bits=4):
        super().__init__()
        self.qmin, self.qmax = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        self.step_size = nn.Parameter(torch.tensor(0.1))

    def forward(self, x):
        s = self.step_size
        v = torch.clamp(x / s, self.qmin, self.qmax)
        q = torch.round(v) * s
        return x + (q - x).detach()


class QuantMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act_q = LsqActQuantizer()
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return self.fc2(self.act_q(torch.relu(self.fc1(x))))


if __name__ == "__main__":
    model = QuantMLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    g = model.act_q.step_size.grad
    print("MATCH" if g is not None and g.abs().item() > 0 else "MISMATCH: the step size got no gradient (%s)" % g)
