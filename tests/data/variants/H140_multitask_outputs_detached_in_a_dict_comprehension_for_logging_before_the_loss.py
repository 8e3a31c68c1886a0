# source: multi-task training loops that detach every head's output for logging with a dict comprehension and rebind the same name before the loss is computed (forum threads "my heads don't learn, only weight decay changes the weights"): the task losses are built from detached outputs; only the explicit L2 term reaches the model
# family: H
# expect: silent
# verify: the trunk's gradient is compared with the gradient of the L2 term alone
# line: 31
# fix: keep the graph for the loss: logs = {k: v.detach() for k, v in out.items()} (log from logs, compute the loss from out)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 3), "reg": nn.Linear(16, 1)})

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


if __name__ == "__main__":
    model = MultiHead()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, c, r = torch.randn(12, 6), torch.randint(0, 3, (12,)), torch.randn(12, 1)
    for step in range(2):
        out = model(x)
        out = {k: v.detach() for k, v in out.items()}
        l2 = sum(p.pow(2).sum() for p in model.parameters())
        loss = F.cross_entropy(out["cls"], c) + F.mse_loss(out["reg"], r) + 1e-4 * l2
        opt.zero_grad()
        loss.backward()
        only_l2 = torch.allclose(model.trunk[0].weight.grad, 2e-4 * model.trunk[0].weight)
        opt.step()
    print("MISMATCH: only the L2 term reaches the model" if only_l2 else "MATCH")
