"""Multi-task training: every head of the ModuleDict is trained by its weighted loss."""
import torch

from configs.nyuv2_lite import TASKS, config
from mtl.losses import MultiTaskLoss
from mtl.models import MultiTaskNet


def make_targets(n):
    return {
        "semseg": torch.randint(0, 4, (n,)),
        "depth": torch.rand(n, 1),
        "normals": torch.nn.functional.normalize(torch.randn(n, 3), dim=1),
    }


def main():
    torch.manual_seed(0)
    model = MultiTaskNet(TASKS, config["backbone"], config["heads"])
    criterion = MultiTaskLoss(config["loss_weights"])
    optimizer = torch.optim.SGD(model.parameters(), **config["optimizer"])
    for it in range(config["iters"]):
        x, targets = torch.randn(8, 12), make_targets(8)
        total, losses = criterion(model(x), targets)
        optimizer.zero_grad()
        total.backward()
        if it == 0:
            untrained = [task for task in TASKS if model.heads[task].weight.grad is None]
            print("MISMATCH: heads without a gradient: " + ", ".join(untrained) if untrained else "MATCH")
        optimizer.step()
        print(it, {k: round(v.item(), 4) for k, v in losses.items()})


if __name__ == "__main__":
    main()
