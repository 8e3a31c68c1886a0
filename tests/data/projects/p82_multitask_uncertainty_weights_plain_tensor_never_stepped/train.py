import itertools

import torch

from mtl.losses import UncertaintyWeightedLoss
from mtl.model import MultiTaskNet


def make_batch():
    x = torch.randn(8, 10)
    return x, {"segment": torch.randint(0, 4, (8,)), "depth": torch.rand(8, 1), "edges": torch.rand(8, 1)}


def main():
    torch.manual_seed(0)
    model = MultiTaskNet()
    criterion = UncertaintyWeightedLoss()
    optimizer = torch.optim.SGD(itertools.chain(model.parameters(), criterion.parameters()), lr=0.1)
    start = criterion.log_vars.detach().clone()
    for step in range(3):
        x, targets = make_batch()
        loss = criterion(model(x), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
    # the check: a loss weight with a gradient must move when the optimizer steps
    has_grad = criterion.log_vars.grad is not None and criterion.log_vars.grad.abs().sum() > 0
    moved = not torch.equal(criterion.log_vars.detach(), start)
    print("MATCH" if (has_grad and moved) else "MISMATCH: loss weights with a gradient never stepped")


if __name__ == "__main__":
    main()
