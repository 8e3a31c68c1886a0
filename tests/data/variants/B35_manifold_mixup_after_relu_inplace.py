# source: Manifold Mixup reimplementations mixing hidden states in place (`out.mul_(lam).add_(out[index], alpha=1 - lam)`) right after F.relu
# family: B
# expect: error
# line: 25  (backward: 40)
# fix: mix out-of-place: out = lam * out + (1 - lam) * out[index]
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PreActNet(nn.Module):
    def __init__(self, c=8, n_cls=5):
        super().__init__()
        self.conv1 = nn.Conv2d(3, c, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.fc = nn.Linear(c, n_cls)

    def forward(self, x, lam=None, index=None):
        out = F.relu(self.bn1(self.conv1(x)))
        if lam is not None:
            out_perm = out[index]
            out.mul_(lam).add_(out_perm, alpha=1 - lam)
        out = F.relu(self.conv2(out))
        return self.fc(out.mean((2, 3)))


def mixup_criterion(logits, y_a, y_b, lam):
    return lam * F.cross_entropy(logits, y_a) + (1 - lam) * F.cross_entropy(logits, y_b)


if __name__ == "__main__":
    net = PreActNet()
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    lam = 0.7
    index = torch.randperm(4)
    loss = mixup_criterion(net(x, lam, index), y, y[index], lam)
    loss.backward()
    print("loss", loss.item())
