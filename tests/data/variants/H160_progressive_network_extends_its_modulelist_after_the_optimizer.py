# source: progressive-growing and continual-learning code that grows the network with self.blocks.extend([...]) when a stage starts, while the optimizer made at the start is kept (forum threads "new layers not training after adding them", "weights don't change"): the new blocks are held by no optimizer
# family: H
# expect: silent
# verify: a block added by extend is compared before and after the steps
# line: 28, 29
# fix: build the optimizer after growing (or opt.add_param_group({"params": new_blocks.parameters()}))
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Progressive(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Linear(d, d)])
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        for blk in self.blocks:
            x = torch.tanh(blk(x))
        return self.out(x)


if __name__ == "__main__":
    model = Progressive()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.blocks.extend([nn.Linear(8, 8) for _ in range(2)])
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    before = model.blocks[2].weight.detach().clone()
    for _ in range(3):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    print("MISMATCH: the new blocks never move" if torch.equal(before, model.blocks[2].weight) else "MATCH")
