# source: Highway network layers (y = T * H + (1 - T) * x) written with an in-place accumulation of the carry term
# family: G
# expect: ok
# line: 26  (backward: 34)
# fix: none needed - `out` is the output of a mul, whose backward saves its inputs (t and h), never its output, so `out += (1 - t) * x` is safe
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Highway(nn.Module):
    def __init__(self, d=12, n_layers=2):
        super().__init__()
        self.H = nn.ModuleList([nn.Linear(d, d) for _ in range(n_layers)])
        self.T = nn.ModuleList([nn.Linear(d, d) for _ in range(n_layers)])
        for gate in self.T:
            nn.init.constant_(gate.bias, -1.0)

    def forward(self, x):
        for H, T in zip(self.H, self.T):
            t = torch.sigmoid(T(x))
            h = F.relu(H(x))
            out = t * h
            out += (1 - t) * x
            x = out
        return x


if __name__ == "__main__":
    net = Highway()
    loss = net(torch.randn(5, 12)).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
