# source: weight-noise regularisation / noise-robust training for analog hardware (forum threads "a leaf Variable that requires grad is being used in an in-place operation"): a Linear subclass adds Gaussian noise to self.weight with add_ inside forward
# family: A
# expect: error
# line: 20
# fix: make a noisy copy: weight = self.weight + torch.randn_like(self.weight) * self.sigma, and pass it to F.linear
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NoisyLinear(nn.Linear):
    def __init__(self, n_in, n_out, sigma=0.05):
        super().__init__(n_in, n_out)
        self.sigma = sigma

    def forward(self, x):
        if self.training:
            self.weight.add_(torch.randn_like(self.weight) * self.sigma)
        return F.linear(x, self.weight, self.bias)


if __name__ == "__main__":
    net = nn.Sequential(NoisyLinear(8, 16), nn.ReLU(), NoisyLinear(16, 2))
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(10, 8), torch.randint(0, 2, (10,))
    loss = F.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())
