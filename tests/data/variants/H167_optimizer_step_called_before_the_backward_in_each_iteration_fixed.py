# source: training loops where opt.step() was moved above loss.backward() while refactoring (forum threads "optimizer.step() before loss.backward()", "weights don't change", "loss not decreasing"): each step runs right after zero_grad, when no parameter has a gradient, and the gradients the backward then fills are cleared by the next iteration's zero_grad
# family: H
# expect: ok
# verify: the first layer's weight is compared before and after the steps
# line: 18  (backward: 19)
# fix: (fixed version of H167_optimizer_step_called_before_the_backward_in_each_iteration.py) call opt.step() after loss.backward()
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def train_epoch(model, opt, batches):
    for x, y in batches:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(3)]
    before = model[0].weight.detach().clone()
    for epoch in range(2):
        train_epoch(model, opt, batches)
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")
