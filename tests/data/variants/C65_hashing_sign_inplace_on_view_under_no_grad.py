# source: deep supervised hashing code that wants binary codes in the forward pass and the tanh gradient in the backward pass and "gets" it by calling sign_() on a reshaped view of the tanh output inside torch.no_grad(); the write still bumps the version of the tensor TanhBackward saved
# family: C
# expect: error
# line: 24  (backward: 41)
# fix: straight-through estimator out-of-place: codes = codes + (codes.sign() - codes).detach()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DeepHash(nn.Module):
    def __init__(self, d_in=20, n_tables=3, bits_per_table=4):
        super().__init__()
        self.n_tables = n_tables
        self.n_bits = n_tables * bits_per_table
        self.enc = nn.Sequential(nn.Linear(d_in, 32), nn.ReLU(), nn.Linear(32, self.n_bits))

    def forward(self, x):
        h = torch.tanh(self.enc(x))
        codes = h.view(x.size(0), self.n_tables, -1)
        with torch.no_grad():
            codes.sign_()
        return codes


def pairwise_hash_loss(codes, labels):
    b = codes.flatten(1)
    sim = (b @ b.t()) / b.size(1)
    target = (labels.unsqueeze(0) == labels.unsqueeze(1)).float() * 2 - 1
    return F.mse_loss(sim, target)


if __name__ == "__main__":
    model = DeepHash()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, labels = torch.randn(10, 20), torch.randint(0, 3, (10,))
    loss = pairwise_hash_loss(model(x), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("loss", loss.item())
