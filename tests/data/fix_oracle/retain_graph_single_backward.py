# fix-kind: retain_graph
# why: the losses are summed and backpropagated once; the hidden state carried to the next
#      iteration is detached.
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(3, 4)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
h = torch.zeros(2, 4)
for step in range(3):
    h = cell(torch.randn(2, 3), h)
    loss = h.pow(2).mean() + h.abs().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h = h.detach()
    print(f"{step} {loss.item():.6f}")
