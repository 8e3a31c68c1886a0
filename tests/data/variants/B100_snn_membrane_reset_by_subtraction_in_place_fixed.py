# source: snntorch-style leaky integrate-and-fire layers (jeshraghian/snntorch issue 159 on reset mechanisms) written by hand with the membrane potential read out every step and reset by subtraction in place (mem -= spk * threshold): the readout saved mem for backward
# family: B
# expect: ok
# line: 41  (backward: 51)
# fix: (fixed version of B100_snn_membrane_reset_by_subtraction_in_place.py) reset out of place so the saved membrane potential keeps its version: mem = mem - spk * self.threshold
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ATanSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, mem_shift):
        ctx.save_for_backward(mem_shift)
        return (mem_shift > 0).to(mem_shift.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (mem_shift,) = ctx.saved_tensors
        return grad_output / (1 + (math.pi * mem_shift) ** 2)


class LeakyReadoutNet(nn.Module):
    def __init__(self, n_in=16, n_hidden=24, n_out=3, beta=0.9, threshold=1.0):
        super().__init__()
        self.fc = nn.Linear(n_in, n_hidden)
        self.readout = nn.Linear(n_hidden, n_out)
        self.beta, self.threshold = beta, threshold

    def forward(self, x_seq):
        mem = torch.zeros(x_seq.shape[1], self.fc.out_features)
        outs = []
        for x in x_seq:
            mem = self.beta * mem + self.fc(x)
            spk = ATanSpike.apply(mem - self.threshold)
            outs.append(self.readout(mem))
            mem = mem - spk * self.threshold
        return torch.stack(outs).mean(0)


if __name__ == "__main__":
    net = LeakyReadoutNet()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    x_seq, y = torch.rand(5, 8, 16), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(net(x_seq), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
