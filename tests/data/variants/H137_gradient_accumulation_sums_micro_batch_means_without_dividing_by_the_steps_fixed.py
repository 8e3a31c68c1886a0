# source: gradient-accumulation loops added to a working script to fit a larger batch (Hugging Face forum threads "loss explodes with gradient_accumulation_steps", "accumulated gradients are N times larger"): each micro-batch's mean loss is backwarded as is, so the step applies accum_steps times the gradient of the large batch
# family: H
# expect: ok
# verify: the accumulated gradient is compared with the gradient of the same batch taken at once
# line: 26
# fix: (fixed version of H137_gradient_accumulation_sums_micro_batch_means_without_dividing_by_the_steps.py) scale each micro-batch: (criterion(model(xb), yb) / accum_steps).backward()
import torch
import torch.nn as nn

torch.manual_seed(0)


def micro_batches(x, y, size):
    for i in range(0, len(x), size):
        yield x[i:i + size], y[i:i + size]


if __name__ == "__main__":
    model = nn.Sequential(nn.Linear(7, 12), nn.Tanh(), nn.Linear(12, 1))
    criterion = nn.MSELoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    x, y = torch.randn(32, 7), torch.randn(32, 1)
    accum_steps = 4
    opt.zero_grad()
    for xb, yb in micro_batches(x, y, 32 // accum_steps):
        (criterion(model(xb), yb) / accum_steps).backward()
    accumulated = model[0].weight.grad.clone()
    full = torch.autograd.grad(criterion(model(x), y), model[0].weight)[0]
    opt.step()
    print("MATCH" if torch.allclose(accumulated, full, atol=1e-6) else "MISMATCH: the step uses %.1fx the batch gradient" % (accumulated.norm() / full.norm()).item())
