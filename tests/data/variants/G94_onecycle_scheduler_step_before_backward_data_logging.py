# source: fastai-style / Kaggle training loops with a per-batch OneCycleLR whose scheduler.step() is called right after the loss is computed (before loss.backward()), weights initialised through .data (DCGAN-style weights_init) and gradient/weight norms logged through .data
# family: G
# expect: ok
# line: 34, 35  (backward: 38)
# fix: none needed - scheduler.step() only rewrites param_group["lr"], never a tensor; the .data writes happen in weights_init before any forward, and the .data uses between forward and backward are reads (norms, item)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def weights_init(m):
    if isinstance(m, nn.Linear):
        m.weight.data.normal_(0.0, 0.02)
        m.bias.data.fill_(0)
    elif isinstance(m, nn.BatchNorm1d):
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


model = nn.Sequential(nn.Linear(20, 64), nn.BatchNorm1d(64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 5))
model.apply(weights_init)
steps = 6
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.5, total_steps=steps + 1)

ok = True
history = []
for step in range(steps):
    x, y = torch.randn(32, 20), torch.randint(0, 5, (32,))
    loss = F.cross_entropy(model(x), y)
    ref = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    scheduler.step()
    weight_norm = sum(p.data.norm() ** 2 for p in model.parameters()).sqrt()
    history.append((loss.data.item(), weight_norm.item(), scheduler.get_last_lr()[0]))
    optimizer.zero_grad()
    loss.backward()
    ok &= all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(model.parameters(), ref))
    optimizer.step()
for h in history:
    print("loss %.4f  |w| %.4f  lr %.4f" % h)
print("MATCH" if ok else "MISMATCH")
