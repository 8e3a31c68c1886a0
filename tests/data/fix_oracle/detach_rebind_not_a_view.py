# fix-kind: detach_rebind
# why: `h.detach_()` on a tensor that is not a view detaches it in place, for every alias; the
#      truncated-BPTT loop below relies on the alias `state["h"]` being detached too.
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.RNNCell(3, 4)
opt = torch.optim.SGD(cell.parameters(), lr=0.1)
h = torch.zeros(2, 4)
state = {"h": h}
for chunk in range(3):
    for t in range(2):
        h = cell(torch.randn(2, 3), h)
        state["h"] = h
    loss = h.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    h.detach_()
    print(f"{chunk} {loss.item():.6f} {state['h'].requires_grad}")
