# source: BiT / timm StdConv2d (weight standardisation: w = (w - mean) / std before F.conv2d), rewritten "to save a copy" as w.sub_(mean).div_(std) on self.weight
# family: A
# expect: ok
# line: 22
# fix: (fixed version of A62_bit_weight_standardized_conv_inplace.py) standardise out-of-place: w = (w - mean) / (std + self.eps)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class StdConv2d(nn.Conv2d):
    def __init__(self, *args, eps=1e-5, **kwargs):
        super().__init__(*args, **kwargs)
        self.eps = eps

    def forward(self, x):
        w = self.weight
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        std = w.std(dim=(1, 2, 3), keepdim=True)
        w = (w - mean) / (std + self.eps)
        return F.conv2d(x, w, self.bias, self.stride, self.padding)


class PreActBottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gn1 = nn.GroupNorm(4, c)
        self.conv1 = StdConv2d(c, c, 3, padding=1, bias=False)
        self.gn2 = nn.GroupNorm(4, c)
        self.conv2 = StdConv2d(c, c, 3, padding=1, bias=False)

    def forward(self, x):
        out = self.conv1(F.relu(self.gn1(x)))
        out = self.conv2(F.relu(self.gn2(out)))
        return x + out


if __name__ == "__main__":
    stem = StdConv2d(3, 8, 3, padding=1, bias=False)
    block = PreActBottleneck(8)
    head = nn.Linear(8, 5)
    x = torch.randn(2, 3, 16, 16)
    logits = head(block(stem(x)).mean(dim=(2, 3)))
    loss = F.cross_entropy(logits, torch.tensor([1, 3]))
    loss.backward()
    print("loss", round(loss.item(), 4))
