# source: instance-discrimination (NPID, zhirongw/lemniscate.pytorch) re-implementations that move the memory-bank update from backward into forward and write it through .data to avoid the in-place error: the version counter is bypassed and backward uses the updated bank
# family: F
# expect: silent
# verify: the feature gradient is compared with the gradient through the memory bank as it was when the scores were computed
# line: 21, 24
# fix: compute the scores against a copy of the bank (x @ self.memory.clone().t()), or update the bank after backward
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LinearAverage(nn.Module):
    def __init__(self, dim, n_data, T=0.1, momentum=0.5):
        super().__init__()
        self.T, self.momentum = T, momentum
        self.register_buffer("memory", F.normalize(torch.randn(n_data, dim), dim=1))

    def forward(self, x, idx):
        out = x @ self.memory.t() / self.T
        with torch.no_grad():
            w = self.memory[idx] * self.momentum + x.detach() * (1 - self.momentum)
            self.memory.data[idx] = F.normalize(w, dim=1)
        return out


if __name__ == "__main__":
    encoder = nn.Linear(12, 8)
    lemniscate = LinearAverage(8, n_data=20)
    x_in, idx = torch.randn(6, 12), torch.arange(6)
    bank_before = lemniscate.memory.clone()
    feats = F.normalize(encoder(x_in), dim=1)
    out = lemniscate(feats, idx)
    loss = F.cross_entropy(out, idx)
    (got,) = torch.autograd.grad(loss, feats, retain_graph=True)
    feats_ref = feats.detach().requires_grad_(True)
    (ref,) = torch.autograd.grad(F.cross_entropy(feats_ref @ bank_before.t() / lemniscate.T, idx), feats_ref)
    print("MATCH" if torch.allclose(got, ref, atol=1e-6) else "MISMATCH: backward used the memory bank updated in forward")
