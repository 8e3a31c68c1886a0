# expect: error
# line: 28
# A residual block that applies an in-place ReLU and then adds the shortcut in place:
# ReLU's backward needs its own output, which `out += identity` overwrites.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = self.relu(out)
        # The fix: add first, then activate (out += identity; out = self.relu(out))
        out = out  # (kept simple on purpose)
        out = out * 1.0
        out = self.relu(out)
        # ReLU(inplace=True) saved `out` for its backward; this write changes it:
        out += identity
        return out


if __name__ == "__main__":
    block = Block(4)
    loss = block(torch.randn(2, 4, 8, 8)).pow(2).mean()
    loss.backward()
