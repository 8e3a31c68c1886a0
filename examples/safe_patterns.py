# expect: ok
# Look-alikes that are correct: gradwarden stays silent on all of them.
import torch
import torch.nn as nn

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)

y = x * 2          # multiplication by a Python number saves nothing
y += 1             # so this in-place add is harmless
y.sum().backward()

u = 2 * x
e = u.exp()        # exp saves its output, not its input
u[0] = 0.0         # so overwriting the input afterwards is fine
e.sum().backward()

w = nn.Parameter(torch.zeros(3))
with torch.no_grad():
    w += 1         # leaf updates under no_grad are how optimizers work
nn.init.normal_(w)  # nn.init runs under no_grad too

h = torch.zeros(3)
for step in range(3):
    h = torch.tanh(h.detach() + x)   # the carried state is detached each step
    h.sum().backward()
