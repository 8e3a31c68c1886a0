# source: https://github.com/Lightning-AI/lightning-thunder/issues/1950 ("buffer updated during the forward - Trying to backward through the graph a second time") and hand-written mean-only normalisation layers that keep a running mean buffer and update it in place from the batch with grad enabled
# family: D
# expect: error
# line: 23  (backward: 45)
# fix: update the running statistic from detached values (or under torch.no_grad()): self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.detach().mean(0))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RunningCenter(nn.Module):
    """Centre features with an exponential running mean (used in training and evaluation alike)."""

    def __init__(self, dim, momentum=0.1):
        super().__init__()
        self.momentum = momentum
        self.register_buffer("running_mean", torch.zeros(dim))

    def forward(self, x):
        if self.training:
            self.running_mean.mul_(1 - self.momentum).add_(self.momentum * x.mean(0))
        return x - self.running_mean


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.center = RunningCenter(32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.center(self.fc1(x))))


if __name__ == "__main__":
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", loss.item())
