# from: torch-geometric 2.8.1, torch_geometric/graphgym/models/encoder.py:64 and :99,
#       torch_geometric/llm/models/git_mol.py:213; monai 1.6.1, monai/networks/nets/dints.py:902
# pattern: `x += emb(...)` / `loss += term` in a loop inside one forward: one graph that the
#          caller's backward needs whole, not a graph kept across training iterations (GW404)
# expect: none
# torch: ok
import torch
from torch import nn


class AtomEncoder(nn.Module):
    def __init__(self, dims, emb_dim):
        super().__init__()
        self.embeddings = nn.ModuleList(nn.Embedding(d, emb_dim) for d in dims)

    def forward(self, x):
        encoded = 0
        for i in range(x.shape[1]):
            encoded += self.embeddings[i](x[:, i])
        return encoded


class TwoTermLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, feats, targets):
        loss = 0
        for f, t in zip(feats, targets):
            loss += nn.functional.mse_loss(self.proj(f), t)
            loss += self.proj(f).abs().mean()
        return loss / 4


# --- driver: run under torch, not analysed ---
enc = AtomEncoder([5, 6, 7], 8)
enc(torch.randint(0, 5, (10, 3))).sum().backward()
m = TwoTermLoss()
m([torch.randn(2, 4), torch.randn(2, 4)], [torch.randn(2, 4), torch.randn(2, 4)]).backward()
