# source: normalisation layers that keep a running feature mean with self.register_buffer("running_mean", torch.zeros(d)) updated under no_grad in forward (BatchNorm-like centring): a buffer is meant not to train, and the layer's weights, which are Parameters, train
# family: G
# expect: ok
# verify: the linear layer's weight is compared before and after the steps
# line: 18
# fix: none needed: the buffer holds a statistic, not a learnable value
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Centred(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.fc = nn.Linear(d, 1)
        self.register_buffer("running_mean", torch.zeros(d))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_mean.mul_(0.9).add_(0.1 * x.mean(0))
        return self.fc(x - self.running_mean)


if __name__ == "__main__":
    model = Centred()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    before = model.fc.weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the weights never move" if torch.equal(before, model.fc.weight) else "MATCH")
