# source: multi-task models that add a task head with model.heads.update({...}) (or ModuleDict item assignment) after the optimizer was built, e.g. when a new task is registered at run time (forum threads "new head not training", "parameters added after optimizer creation"): the optimizer holds only the parameters that existed when it was made; the new head gets gradients but is never stepped
# family: H
# expect: silent
# verify: the added head's weight is compared before and after the steps
# line: 26, 27
# fix: register the head before building the optimizer (move the update above the optimizer), or opt.add_param_group({'params': ...})
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(8, 16)
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 4)})

    def forward(self, x, task):
        return self.heads[task](torch.relu(self.trunk(x)))


if __name__ == "__main__":
    model = MultiTask()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.heads.update({"reg": nn.Linear(16, 1)})
    x, yc, yr = torch.randn(16, 8), torch.randint(0, 4, (16,)), torch.randn(16, 1)
    before = model.heads["reg"].weight.detach().clone()
    for step in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x, "cls"), yc) + F.mse_loss(model(x, "reg"), yr)
        loss.backward()
        opt.step()
    print("MISMATCH: the new head never moves" if torch.equal(before, model.heads["reg"].weight) else "MATCH")
