# source: multi-head continual learning (a new classifier head per task, as in Avalanche's multi-head models and LwF re-implementations): the head for a new task is created after the optimizer, and optimizer.add_param_group hands it to the optimizer before training on that task, so it does train
# family: G
# expect: ok
# line: 32
# fix: none needed: add_param_group gives the new head to the optimizer
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.heads = nn.ModuleDict({"0": nn.Linear(32, 3)})

    def add_task(self, task_id, num_classes):
        self.heads[str(task_id)] = nn.Linear(32, num_classes)
        return self.heads[str(task_id)]

    def forward(self, x, task_id):
        return self.heads[str(task_id)](self.trunk(x))


if __name__ == "__main__":
    model = MultiHeadNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for task_id in (0, 1):
        if task_id > 0:
            head = model.add_task(task_id, num_classes=4)
            optimizer.add_param_group({"params": head.parameters()})
        head = model.heads[str(task_id)]
        before = head.weight.detach().clone()
        x, y = torch.randn(16, 10), torch.randint(0, 3 + task_id, (16,))
        for step in range(3):
            loss = F.cross_entropy(model(x, task_id), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("task", task_id, "head moved", not torch.equal(before, head.weight.detach()))
