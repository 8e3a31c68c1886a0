# source: linear warm-up written as LambdaLR(opt, lambda step: min(1.0, step // warmup)) (forum threads "learning rate is 0 during warmup", "model does not train with LambdaLR"): floor division gives 0 for every step before the warm-up ends, so every update in that span is multiplied by zero
# family: H
# expect: silent
# verify: the first layer's weight is compared before and after five steps of the warm-up
# line: 18
# fix: use true division: lambda step: min(1.0, (step + 1) / warmup)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    warmup = 100
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, step // warmup))
    x, y = torch.randn(16, 5), torch.randn(16, 1)
    before = model[0].weight.detach().clone()
    for step in range(5):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
        sched.step()
    print("MISMATCH: the weights never move" if torch.equal(before, model[0].weight) else "MATCH")
