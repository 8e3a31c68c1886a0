# source: models that build their blocks in a Python list and register each one with add_module (older ResNet/VGG ports): the list is only a convenience handle; every block is a registered child and trains
# family: G
# expect: ok
# verify: the first block's weight is compared before and after the steps
# line: 18
# fix: none needed: add_module registers the blocks
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ResidualMLP(nn.Module):
    def __init__(self, d=8, depth=3):
        super().__init__()
        self.inp = nn.Linear(4, d)
        self.blocks = [nn.Linear(d, d) for _ in range(depth)]
        for i, block in enumerate(self.blocks):
            self.add_module(f"block{i}", block)
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
