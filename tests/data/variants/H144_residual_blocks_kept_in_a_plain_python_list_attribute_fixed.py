# source: models that keep their hidden blocks in a plain Python list attribute (self.blocks = [nn.Linear(...) for _ in range(n)]) (forum threads "model.parameters() is missing my layers", "layers in a list are not trained"): nn.Module does not register modules held in a list, so the optimizer never sees them and they keep their initial weights
# family: H
# expect: ok
# verify: the first block's weight is compared before and after the steps
# line: 18
# fix: (fixed version of H144_residual_blocks_kept_in_a_plain_python_list_attribute.py) register them: self.blocks = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualMLP(nn.Module):
    def __init__(self, d=8, depth=3):
        super().__init__()
        self.inp = nn.Linear(4, d)
        self.blocks = nn.ModuleList(nn.Linear(d, d) for _ in range(depth))
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = h + torch.relu(block(h))
        return self.out(h)


if __name__ == "__main__":
    model = ResidualMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    before = model.blocks[0].weight.detach().clone()
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for step in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the blocks never train" if torch.equal(before, model.blocks[0].weight) else "MATCH")
