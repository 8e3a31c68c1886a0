# source: sparse autoencoder tutorials with an L1 activity penalty on the mean code (forum threads "my sparsity penalty has no effect on training"): the penalty is summed in Python over codes.mean(0).tolist(), a list of floats, so it is a constant added to the loss and the encoder gets no gradient from it
# family: H
# expect: silent
# verify: the encoder is trained from the same seed with the penalty weight at 0 and at 0.5 and the two results are compared
# line: 24
# fix: keep the penalty a tensor: return codes.mean(0).abs().sum()
import torch
import torch.nn as nn
import torch.nn.functional as F


class SparseAutoencoder(nn.Module):
    def __init__(self, n_in=20, n_code=40):
        super().__init__()
        self.encoder = nn.Linear(n_in, n_code)
        self.decoder = nn.Linear(n_code, n_in)

    def forward(self, x):
        codes = torch.relu(self.encoder(x))
        return codes, self.decoder(codes)


def l1_activity(codes):
    return sum(abs(v) for v in codes.mean(0).tolist())


def train(beta, steps=5):
    torch.manual_seed(0)
    model = SparseAutoencoder()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        x = torch.randn(32, 20)
        codes, recon = model(x)
        loss = F.mse_loss(recon, x) + beta * l1_activity(codes)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.encoder.weight.detach().clone()


if __name__ == "__main__":
    plain, sparse = train(0.0), train(0.5)
    same = torch.equal(plain, sparse)
    print("MISMATCH: the sparsity penalty never changed the encoder" if same else "MATCH")
