# source: multi-task training loops that step once per task loss over one shared forward (forum threads "one of the variables needed for gradient computation has been modified by an inplace operation" after adding retain_graph=True): the first task's optimizer.step() updates the shared trunk's weights in place, and the second task's backward still needs their old values
# family: E
# expect: error
# line: 33  (backward: 32)
# fix: sum the task losses and step once: optimizer.zero_grad(); sum(losses).backward(); optimizer.step()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, n_in=12, hidden=24, task_classes=(3, 5)):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.heads = nn.ModuleList(nn.Linear(hidden, c) for c in task_classes)

    def forward(self, x):
        shared = self.trunk(x)
        return [head(shared) for head in self.heads]


if __name__ == "__main__":
    model = MultiTaskNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(16, 12)
    targets = [torch.randint(0, 3, (16,)), torch.randint(0, 5, (16,))]
    losses = [F.cross_entropy(out, t) for out, t in zip(model(x), targets)]
    for loss in losses:
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
    print("losses", [round(l.item(), 4) for l in losses])
