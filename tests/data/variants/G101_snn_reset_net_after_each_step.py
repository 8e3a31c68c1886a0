# source: https://github.com/fangwei123456/spikingjelly/issues/318 ("We recommend to call reset_net after optimizer.step()"): stateful LIF neurons keep v on the module, and the state is reset after every batch
# family: G
# expect: ok
# line: 34
# fix: none needed - the carried membrane state is reset before the next batch, so no graph crosses batches
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StraightThroughSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() < 0.5).to(x.dtype)


class LIF(nn.Module):
    def __init__(self, decay=0.5):
        super().__init__()
        self.decay = decay
        self.v = None

    def forward(self, x):
        v = x if self.v is None else self.decay * self.v + x
        spike = StraightThroughSpike.apply(v - 1.0)
        self.v = v - spike
        return spike


def reset_net(net):
    for m in net.modules():
        if isinstance(m, LIF):
            m.v = None


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(20, 32), LIF(), nn.Linear(32, 4), LIF())
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(3):
        x_seq, y = (torch.rand(5, 8, 20) < 0.3).float(), torch.randint(0, 4, (8,))
        rate = sum(net(x) for x in x_seq) / x_seq.shape[0]
        loss = F.mse_loss(rate, F.one_hot(y, 4).float())
        opt.zero_grad()
        loss.backward()
        opt.step()
        reset_net(net)
        print("step", step, "loss", loss.item())
