# fix-kind: inplace_false
# why: `ReLU(inplace=True)` after a BatchNorm is the standard, correct use.
import torch
import torch.nn as nn

torch.manual_seed(0)
block = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(inplace=True),
                      nn.Conv2d(4, 2, 3, padding=1))
opt = torch.optim.SGD(block.parameters(), lr=0.1)
for step in range(2):
    x = torch.randn(2, 2, 5, 5)
    loss = block(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{step} {loss.item():.6f}")
