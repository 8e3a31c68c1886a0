# source: BinaryConnect/XNOR-style layers that binarize weights with torch.sign in forward and no straight-through estimator: sign's derivative is zero, so the real-valued weights never change (https://github.com/itayhubara/BinaryNet.pytorch uses a custom STE for exactly this reason)
# family: H
# expect: silent
# verify: the binarized layer's real weights are compared before and after one SGD step
# line: 18
# fix: pass the gradient straight through the sign: w_b = w + (torch.sign(w) - w).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BinaryConv(nn.Conv2d):
    def forward(self, x):
        alpha = self.weight.detach().abs().mean()
        # binarize the weights, scaled by their mean magnitude
        w_b = torch.sign(self.weight) * alpha
        return F.conv2d(x, w_b, self.bias, padding=1)


if __name__ == "__main__":
    conv = BinaryConv(3, 4, 3)
    opt = torch.optim.SGD(conv.parameters(), lr=0.1)
    before = conv.weight.detach().clone()
    x = torch.randn(2, 3, 8, 8)
    loss = conv(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("MATCH" if not torch.equal(before, conv.weight) else "MISMATCH: sign() gives the real weights a zero gradient; they never move")
