# source: https://github.com/mit-han-lab/temporal-shift-module/issues/105 ("about the shift module inplace output": "the output of inplace shift is different from the normal shift"; the maintainers: "the current inplace shift has some bug"); the naive in-place version writes x[:, 1:, :fold] from x[:, :-1, :fold], an overlapping self-copy that torch does not reject for these strides
# family: C
# expect: silent
# verify: the shifted activation and the backbone's gradient are compared with the same shift written out of place (out = x.clone(); out[:, 1:, :fold] = x[:, :-1, :fold]; ...)
# line: 18  (backward: 57)
# fix: shift out of place into a new tensor (out = x.clone(); out[:, 1:, :fold] = x[:, :-1, :fold]; ...), or copy the source first: x[:, :-1, :fold].clone()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def temporal_shift(x, n_segment, fold_div=4):
    nt, c, h, w = x.size()
    x = x.view(nt // n_segment, n_segment, c, h, w)
    fold = c // fold_div
    x[:, 1:, :fold] = x[:, :-1, :fold]
    x[:, :-1, fold:2 * fold] = x[:, 1:, fold:2 * fold]
    return x.view(nt, c, h, w)


def reference_shift(x, n_segment, fold_div=4):
    nt, c, h, w = x.size()
    x = x.view(nt // n_segment, n_segment, c, h, w)
    fold = c // fold_div
    out = x.clone()
    out[:, 0, :fold] = x[:, 0, :fold]
    out[:, 1:, :fold] = x[:, :-1, :fold]
    out[:, :-1, fold:2 * fold] = x[:, 1:, fold:2 * fold]
    return out.view(nt, c, h, w)


class TSMNet(nn.Module):
    def __init__(self, n_segment=4, channels=8, n_classes=3, shift=temporal_shift):
        super().__init__()
        self.n_segment, self.shift = n_segment, shift
        self.conv1 = nn.Conv2d(3, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.fc = nn.Linear(channels, n_classes)

    def forward(self, clips):
        b, t = clips.shape[:2]
        x = F.relu(self.conv1(clips.flatten(0, 1)))
        x = self.shift(x * 1.0, self.n_segment)
        x = F.relu(self.conv2(x)).mean(dim=(2, 3))
        return self.fc(x.view(b, t, -1).mean(dim=1))


if __name__ == "__main__":
    model = TSMNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for step in range(3):
        clips, labels = torch.randn(2, 4, 3, 6, 6), torch.randint(0, 3, (2,))
        loss = F.cross_entropy(model(clips), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))

    clips, labels = torch.randn(2, 4, 3, 6, 6), torch.randint(0, 3, (2,))
    watched = list(model.conv1.parameters())
    got = torch.autograd.grad(F.cross_entropy(model(clips), labels), watched)
    model.shift = reference_shift
    ref = torch.autograd.grad(F.cross_entropy(model(clips), labels), watched)
    if all(torch.allclose(g, r, atol=1e-6) for g, r in zip(got, ref)):
        print("MATCH")
    else:
        print("MISMATCH: the in-place shift copied frame 0 into every frame; conv1 gradient off by",
              max((g - r).abs().max().item() for g, r in zip(got, ref)))
