# source: BinaryConnect / XNOR-Net re-implementations (forum threads "the latent weights of my binarized layer never change"): the binarized weight is made as a new leaf, w.sign().detach().requires_grad_(), instead of passing the gradient straight through, so the loss reaches the new leaf and the real-valued weights the optimizer holds never get a gradient
# family: H
# expect: silent
# verify: the first binary layer's latent weights are compared before and after the training steps
# line: 16
# fix: pass the gradient straight through to the latent weights: w_b = self.weight + (self.weight.sign() - self.weight).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinaryLinear(nn.Linear):
    def forward(self, x):
        w_b = self.weight.sign().detach().requires_grad_()
        return F.linear(x, w_b, self.bias)


if __name__ == "__main__":
    net = nn.Sequential(BinaryLinear(12, 32), nn.BatchNorm1d(32), nn.Hardtanh(), BinaryLinear(32, 4))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    before = net[0].weight.detach().clone()
    for step in range(4):
        x, y = torch.randn(16, 12), torch.randint(0, 4, (16,))
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(before, net[0].weight.detach())
    print("MATCH" if moved else "MISMATCH: the latent weights of the binary layer never moved")
