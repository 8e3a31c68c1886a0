# source: feature-fusion heads that concatenate multi-scale features and add a learned bias in place (feats = torch.cat([...], 1); feats += self.bias) before a LayerNorm
# family: G
# expect: ok
# line: 22  (backward: 29)
# fix: none needed - torch.cat saves nothing for its backward (only the split sizes), so modifying its output in place is safe; the inputs of cat are untouched
import torch
import torch.nn as nn

torch.manual_seed(0)


class FusionHead(nn.Module):
    def __init__(self, dims=(4, 6), n_out=3):
        super().__init__()
        self.projs = nn.ModuleList([nn.Linear(d, 8) for d in dims])
        self.bias = nn.Parameter(torch.zeros(8 * len(dims)))
        self.norm = nn.LayerNorm(8 * len(dims))
        self.out = nn.Linear(8 * len(dims), n_out)

    def forward(self, feats):
        fused = torch.cat([torch.tanh(p(f)) for p, f in zip(self.projs, feats)], dim=1)
        fused += self.bias
        return self.out(self.norm(fused))


if __name__ == "__main__":
    head = FusionHead()
    loss = head([torch.randn(5, 4), torch.randn(5, 6)]).pow(2).mean()
    loss.backward()
    print("loss", loss.item())
