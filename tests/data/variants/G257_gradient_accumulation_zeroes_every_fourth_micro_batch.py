# source: gradient accumulation over micro-batches (the Hugging Face / Lightning accumulate_grad_batches pattern written by hand): gradients are summed on purpose and cleared right after each optimizer step
# family: G
# expect: ok
# line: 22
# fix: none needed: accumulation is intended and the gradients are zeroed after every step
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 12), nn.ReLU(), nn.Linear(12, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
accum = 4

if __name__ == "__main__":
    xs, ys = torch.randn(16, 8), torch.randint(0, 2, (16,))
    full = torch.autograd.grad(F.cross_entropy(model(xs[:8]), ys[:8]), model[0].weight)[0]
    opt.zero_grad()
    for k, (x, y) in enumerate(zip(xs.split(2), ys.split(2))):
        loss = F.cross_entropy(model(x), y) / accum
        loss.backward()
        if k == accum - 1:
            ok = torch.allclose(model[0].weight.grad, full, atol=1e-6)
        if (k + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
    print("loss %.4f" % loss.item())
    print("MATCH" if ok else "MISMATCH: accumulated gradient differs from the full batch's")
