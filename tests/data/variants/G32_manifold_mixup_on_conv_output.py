# source: Manifold Mixup at the block input of a ResNet: the conv output (not an activation) is mixed in place
# family: G
# expect: ok
# line: 23  (backward: 34)
# fix: none needed - the conv's backward saves its input and weight, not its output; the indexed copy out[index] is taken before the in-place mix and the next conv saves the already-mixed tensor
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MixNet(nn.Module):
    def __init__(self, c=8, n_cls=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.fc = nn.Linear(c, n_cls)

    def forward(self, x, lam, index):
        out = self.conv1(x)
        out_perm = out[index]
        out.mul_(lam).add_(out_perm, alpha=1 - lam)
        out = F.relu(self.conv2(F.relu(out)))
        return self.fc(out.mean((2, 3)))


if __name__ == "__main__":
    net = MixNet()
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    index, lam = torch.randperm(4), 0.6
    logits = net(x, lam, index)
    loss = lam * F.cross_entropy(logits, y) + (1 - lam) * F.cross_entropy(logits, y[index])
    loss.backward()
    print("loss", loss.item())
