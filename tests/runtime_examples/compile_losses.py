"""A small model trained with torch.compile: the losses must be those of a plain run."""
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
# a backend name as the first argument (the tests use aot_eager: Dynamo and AOTAutograd, no C++ compiler)
compiled = torch.compile(model, backend=sys.argv[1] if len(sys.argv) > 1 else "inductor")
x = torch.randn(32, 8)
y = torch.randn(32, 1)
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.mse_loss(compiled(x), y)
    loss.backward()
    opt.step()
    print("step %d loss %.6f" % (step, loss.item()))
