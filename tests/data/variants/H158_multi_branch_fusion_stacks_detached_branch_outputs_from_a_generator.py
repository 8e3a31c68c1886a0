# source: multi-branch fusion models (ensembles of view encoders averaged by torch.stack) where the branches are stacked from a generator that detaches each output "to save memory" (forum threads "branches not training", "weights don't change"): the stacked tensor carries no graph to the branches, only the fusion head trains
# family: H
# expect: silent
# verify: the first branch's weight is compared before and after the steps
# line: 21
# fix: keep the graph: torch.stack(tuple(b(x) for b in self.branches))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Fusion(nn.Module):
    def __init__(self, d=6, n=3):
        super().__init__()
        self.branches = nn.ModuleList(nn.Linear(d, 8) for _ in range(n))
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        feats = torch.stack(tuple(b(x).detach() for b in self.branches))
        return self.head(feats.mean(0))


if __name__ == "__main__":
    model = Fusion()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    before = model.branches[0].weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the branches never move" if torch.equal(before, model.branches[0].weight) else "MATCH")
