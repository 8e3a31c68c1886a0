# source: set / point-cloud readouts over zero-padded batches that take vector lengths as (v * v).sum(-1) ** 0.5 (forum threads "NaN gradients only when the batch has padding"): the padded rows are exactly zero after the mask multiply, the power's derivative there is infinite, and the later mask multiply turns it into NaN
# family: H
# expect: ok
# verify: the projection's weight gradient after the backward is checked for non-finite values
# line: 22  (backward: 34)
# fix: (fixed version of H112_padded_vector_lengths_by_power_one_half.py) keep the power away from zero: length = ((vec * vec).sum(-1) + 1e-12) ** 0.5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PaddedVectorReadout(nn.Module):
    def __init__(self, d=6):
        super().__init__()
        self.proj = nn.Linear(d, 3)
        self.readout = nn.Linear(1, 1)

    def forward(self, feats, keep):
        vec = self.proj(feats) * keep.unsqueeze(-1)
        length = ((vec * vec).sum(-1) + 1e-12) ** 0.5
        pooled = (length * keep).sum(1, keepdim=True) / keep.sum(1, keepdim=True)
        return self.readout(pooled)


if __name__ == "__main__":
    model = PaddedVectorReadout()
    feats = torch.randn(3, 5, 6)
    sizes = torch.tensor([5, 3, 2])
    keep = (torch.arange(5)[None, :] < sizes[:, None]).float()
    target = torch.randn(3, 1)
    loss = F.mse_loss(model(feats, keep), target)
    loss.backward()
    finite = bool(torch.isfinite(model.proj.weight.grad).all())
    print("loss %.4f" % loss.item())
    print("MATCH" if finite else "MISMATCH: nan gradient from the padded rows")
