# source: configs where the step-decay factor was set to 0 (gamma=0 meant "no decay" to the author; forum threads "loss stops decreasing after the first epoch", "learning rate becomes 0 with StepLR"): StepLR multiplies the learning rate by gamma, so every step after the first epoch uses a learning rate of 0
# family: H
# expect: ok
# verify: the weights after the first epoch are compared with the weights after the last
# line: 17
# fix: (fixed version of H162_step_decay_scheduler_with_gamma_zero_stops_training_after_one_epoch.py) StepLR(opt, step_size=1, gamma=0.5) (gamma=1.0 for no decay)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    after_first = None
    for epoch in range(4):
        for _ in range(2):
            opt.zero_grad()
            F.mse_loss(model(x), y).backward()
            opt.step()
        sched.step()
        if after_first is None:
            after_first = model[0].weight.detach().clone()
    print("MISMATCH: training stops after one epoch" if torch.equal(after_first, model[0].weight) else "MATCH")
