# source: feature-distillation loops that clear gradients by hand, for p in student.parameters(): p.grad = None, while one optimizer also steps a projector (FitNets-style hint layers; forum threads "my projector explodes"): the projector's gradients are never cleared and accumulate across steps
# family: H
# expect: silent
# verify: the projector's gradient after each backward is compared with that step's own gradient
# line: 28, 29  (backward: 32)
# fix: clear every parameter the optimizer steps: opt.zero_grad(set_to_none=True)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

student = nn.Sequential(nn.Linear(8, 12), nn.ReLU(), nn.Linear(12, 6))
projector = nn.Linear(6, 10)
teacher = nn.Sequential(nn.Linear(8, 10), nn.Tanh())
opt = torch.optim.SGD(list(student.parameters()) + list(projector.parameters()), lr=0.05)


def hint_loss(x):
    with torch.no_grad():
        target = teacher(x)
    return F.mse_loss(projector(student(x)), target)


if __name__ == "__main__":
    for step in range(3):
        x = torch.randn(16, 8)
        for p in student.parameters():
            p.grad = None
        own = torch.autograd.grad(hint_loss(x), projector.weight)[0]
        loss = hint_loss(x)
        loss.backward()
        ok = torch.allclose(projector.weight.grad, own, atol=1e-6)
        opt.step()
    print("loss %.4f" % loss.item())
    print("MATCH" if ok else "MISMATCH: the projector's gradients accumulate across steps")
