# source: https://github.com/fangwei123456/Spike-Element-Wise-ResNet/issues/19 and https://github.com/fangwei123456/spikingjelly/issues/29 (stateful LIF neurons keep their membrane potential v on the module; without functional.reset_net(net) after each batch the next batch's graph is chained to the freed one and the surrogate backward reads freed ctx.saved_tensors)
# family: D
# expect: error
# line: 35, 67  (backward: 70)
# fix: reset the neurons' state before every batch (reset_net(net) before the forward), as spikingjelly's examples do after optimizer.step()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SigmoidSurrogateSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        sg = torch.sigmoid(4.0 * x)
        return grad_output * 4.0 * sg * (1.0 - sg)


class LIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0):
        super().__init__()
        self.tau, self.v_threshold = tau, v_threshold
        self.v = 0.0

    def forward(self, x):
        v = self.v + (x - self.v) / self.tau
        spike = SigmoidSurrogateSpike.apply(v - self.v_threshold)
        self.v = v * (1.0 - spike)
        return spike

    def reset(self):
        self.v = 0.0


def reset_net(net):
    for m in net.modules():
        if isinstance(m, LIFNode):
            m.reset()


class SNN(nn.Module):
    def __init__(self, n_in=20, n_hidden=32, n_out=4):
        super().__init__()
        self.fc1, self.lif1 = nn.Linear(n_in, n_hidden), LIFNode()
        self.fc2, self.lif2 = nn.Linear(n_hidden, n_out), LIFNode()

    def forward(self, x_seq):
        rate = 0.0
        for x in x_seq:
            rate = rate + self.lif2(self.fc2(self.lif1(self.fc1(x))))
        return rate / x_seq.shape[0]


if __name__ == "__main__":
    net = SNN()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    for step in range(3):
        x_seq = (torch.rand(6, 8, 20) < 0.4).float()
        label = F.one_hot(torch.randint(0, 4, (8,)), 4).float()
        out_fr = net(x_seq)
        loss = F.mse_loss(out_fr, label)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("step", step, "loss", loss.item())
