# source: low-bit activation quantization written as floor(x * levels) / levels inside the model, trained end to end: every layer before the quantizer receives zero gradient (discussed in https://discuss.pytorch.org/t/torch-round-gradient/28628 and the DoReFa-Net STE)
# family: H
# expect: silent
# verify: the first layer's weight gradient after backward is compared with zero
# line: 16
# fix: quantize with a straight-through estimator: h = h + (torch.floor(h * self.levels) / self.levels - h).detach()
import torch
import torch.nn as nn

torch.manual_seed(0)


def quantize(h, levels):
    h = torch.clamp(h, 0, 1)
    # uniform quantizer to `levels` steps
    return torch.floor(h * levels) / levels


class TinyQNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 16)
        self.fc2 = nn.Linear(16, 1)
        self.levels = 4

    def forward(self, x):
        return self.fc2(quantize(self.fc1(x), self.levels))


if __name__ == "__main__":
    net = TinyQNet()
    x, y = torch.randn(32, 10), torch.randn(32, 1)
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    g = net.fc1.weight.grad
    print("MATCH" if g.abs().sum() > 0 else "MISMATCH: floor() blocks the gradient; fc1 never trains")
