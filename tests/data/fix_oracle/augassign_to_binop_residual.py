# fix-kind: augassign_to_binop
# why: `out += identity` after a conv (which saves its input, not its output) is correct; a
#      rewrite would be harmless, an alias of `out` read later must still see the sum.
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv2d(2, 2, 3, padding=1)
x = torch.randn(1, 2, 4, 4, requires_grad=True)
out = conv(x)
alias = out.view(-1)
out += x
loss = (alias * alias).sum()
loss.backward()
print(f"{loss.item():.6f} {x.grad.abs().sum().item():.6f} {conv.weight.grad.abs().sum().item():.6f}")
