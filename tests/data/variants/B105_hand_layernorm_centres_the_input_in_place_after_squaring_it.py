# source: hand-written LayerNorm / RMS-style normalisation in from-scratch transformer code that computes the second moment from x ** 2 and then centres x in place to save memory (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation ... PowBackward0"): pow saved x, sub_ bumps its version, and backward raises
# family: B
# expect: error
# line: 21  (backward: 33)
# fix: centre out of place: x = x - mean
import torch
import torch.nn as nn

torch.manual_seed(0)


class ScratchLayerNorm(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = (x ** 2).mean(-1, keepdim=True) - mean ** 2
        x.sub_(mean)
        return self.gain * x / (var + self.eps).sqrt()


if __name__ == "__main__":
    proj = nn.Linear(6, 8)
    norm = ScratchLayerNorm(8)
    head = nn.Linear(8, 1)
    opt = torch.optim.Adam([*proj.parameters(), *norm.parameters(), *head.parameters()], lr=1e-3)
    x, y = torch.randn(5, 6), torch.randn(5, 1)
    loss = nn.functional.mse_loss(head(norm(proj(x))), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss %.4f" % loss.item())
