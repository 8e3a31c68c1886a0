# source: vocoder / TTS training scripts that apply weight normalisation after building the optimizer (HiFi-GAN-style code; forum threads "weight_norm layer does not learn"): parametrizations.weight_norm replaces the layer's weight by new original0/original1 parameters, so the optimizer keeps the old weight, which no longer takes part in the forward
# family: H
# expect: silent
# verify: the parametrized layer's direction parameter is compared before and after the Adam steps
# line: 27, 28  (backward: 35)
# fix: apply weight_norm before the optimizer is built (move the parametrization above torch.optim.Adam(...))
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm

torch.manual_seed(0)


class FrameDecoder(nn.Module):
    def __init__(self, d=10, out=6):
        super().__init__()
        self.pre = nn.Linear(d, 16)
        self.post = nn.Linear(16, out)

    def forward(self, x):
        return self.post(F.leaky_relu(self.pre(x), 0.1))


if __name__ == "__main__":
    model = FrameDecoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.post = weight_norm(model.post)
    x = torch.randn(32, 10)
    target = torch.randn(32, 6)
    before = model.post.parametrizations.weight.original1.detach().clone()
    for _ in range(4):
        opt.zero_grad()
        loss = F.l1_loss(model(x), target)
        loss.backward()
        opt.step()
    moved = not torch.equal(before, model.post.parametrizations.weight.original1)
    print("loss %.4f" % loss.item())
    print("MATCH" if moved else "MISMATCH: the weight-normalised layer never moves")
