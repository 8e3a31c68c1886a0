import torch.nn as nn


class MultiTaskNet(nn.Module):
    """A shared backbone and one head per task, in a ModuleDict keyed by task name."""

    def __init__(self, tasks, backbone, heads):
        super().__init__()
        self.tasks = list(tasks)
        self.backbone = nn.Sequential(nn.Linear(backbone["in_dim"], backbone["width"]), nn.ReLU())
        self.heads = nn.ModuleDict({task: nn.Linear(backbone["width"], heads[task]) for task in self.tasks})

    def forward(self, x):
        feats = self.backbone(x)
        return {task: self.heads[task](feats) for task in self.tasks}
