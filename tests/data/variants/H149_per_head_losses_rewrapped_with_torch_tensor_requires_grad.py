# source: ensembles and multi-head models that combine a list of per-head losses with torch.tensor(losses, requires_grad=True) to silence "element 0 of tensors does not require grad" (forum threads "loss decreases in print but weights don't change", "torch.tensor of a list of losses"): torch.tensor copies the values into a new leaf, so the backward stops there and no head gets a gradient
# family: H
# expect: silent
# verify: the first head's weight is compared before and after the steps
# line: 22
# fix: stack the losses: loss = torch.stack(losses).mean()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    heads = nn.ModuleList([nn.Linear(6, 1) for _ in range(3)])
    opt = torch.optim.Adam(heads.parameters(), lr=1e-2)
    x, y = torch.randn(16, 6), torch.randn(16, 1)
    before = heads[0].weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        losses = [F.mse_loss(h(x), y) for h in heads]
        loss = torch.tensor(losses, requires_grad=True).mean()
        loss.backward()
        opt.step()
        print("step", step, "loss %.4f" % loss.item())
    print("MISMATCH: the heads never move" if torch.equal(before, heads[0].weight) else "MATCH")
