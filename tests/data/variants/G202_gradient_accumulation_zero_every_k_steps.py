# source: https://github.com/ultralytics/ultralytics/pull/11217 (gradient accumulation: optimizer.step() and zero_grad() only every `accumulate` batches; the gradients of the batches in between are meant to add up)
# family: G
# expect: ok
# line: 24
# fix: none needed - gradients are cleared after every optimizer step, accumulation between steps is intended
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    accumulate, last_opt_step = 4, -1
    optimizer.zero_grad()
    for ni in range(12):
        x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
        loss = F.cross_entropy(model(x), y) / accumulate
        loss.backward()
        if ni - last_opt_step >= accumulate:
            optimizer.step()
            optimizer.zero_grad()
            last_opt_step = ni
            print("step at batch", ni, "loss", loss.item() * accumulate)
