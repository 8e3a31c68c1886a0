# source: multi-task models that register task heads with ModuleDict.update at set-up, before the optimizer is built: every head is in model.parameters() when the optimizer reads it
# family: G
# expect: ok
# verify: the regression head's weight is compared before and after the steps
# line: 26
# fix: none needed: the heads exist before the optimizer
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.heads = nn.ModuleDict()

    def forward(self, x, task):
        return self.heads[task](torch.relu(self.trunk(x)))


if __name__ == "__main__":
    model = MultiTask()
    model.heads.update({"cls": nn.Linear(16, 4), "reg": nn.Linear(16, 1)})
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, yc, yr = torch.randn(16, 8), torch.randint(0, 4, (16,)), torch.randn(16, 1)
    before = model.heads["reg"].weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x, "cls"), yc) + F.mse_loss(model(x, "reg"), yr)
        loss.backward()
        opt.step()
    print("MISMATCH: the new head never moves" if torch.equal(before, model.heads["reg"].weight) else "MATCH")
