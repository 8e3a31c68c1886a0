# source: learned compression models that round the latent in the forward through the straight-through form z + (round(z) - z).detach() (the usual answer to "torch.round gradient is zero"): the rounded value is used forward, the identity gradient backward, so the encoder trains
# family: G
# expect: ok
# verify: the encoder's weight is compared before and after the steps
# line: 22
# fix: none needed: the rounding is straight-through
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class QuantAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(12, 4)
        self.dec = nn.Linear(4, 12)

    def forward(self, x):
        z = torch.sigmoid(self.enc(x))
        zq = z + (torch.round(z * 15) / 15 - z).detach()
        return self.dec(zq)


if __name__ == "__main__":
    model = QuantAutoencoder()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.randn(32, 12)
    before = model.enc.weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), x).backward()
        opt.step()
    print("MISMATCH: the encoder never moves" if torch.equal(before, model.enc.weight) else "MATCH")
