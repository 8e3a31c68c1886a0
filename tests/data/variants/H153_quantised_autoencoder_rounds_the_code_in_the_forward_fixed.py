# source: learned compression / quantised autoencoders that round the latent code with torch.round in the forward (forum threads "encoder gradient is zero", "torch.round gradient", "encoder weights don't change"): round's derivative is zero everywhere, so the encoder receives only zero gradients
# family: H
# expect: ok
# verify: the encoder's weight is compared before and after the steps
# line: 22
# fix: (fixed version of H153_quantised_autoencoder_rounds_the_code_in_the_forward.py) round with a straight-through estimator: zq = z + (torch.round(z * 7) / 7 - z).detach()
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
        zq = z + (torch.round(z * 7) / 7 - z).detach()
        return self.dec(zq)


if __name__ == "__main__":
    model = QuantAutoencoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    x = torch.randn(32, 12)
    before = model.enc.weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), x).backward()
        opt.step()
    print("MISMATCH: the encoder never moves" if torch.equal(before, model.enc.weight) else "MATCH")
