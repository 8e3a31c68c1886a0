# fix-kind: inplace_to_outofplace
# why: in-place ops on a mask built without grad and on a clone: nothing saved them; an alias of
#      the mask read later must still see the update.
import torch

torch.manual_seed(0)
x = torch.randn(4, 3, requires_grad=True)
mask = torch.zeros(4, 3)
rows = mask[:2]
mask.add_(1.0)
h = torch.sigmoid(x).clone()
h.mul_(2.0)
loss = (h * mask).sum() + rows.sum()
loss.backward()
print(f"{loss.item():.6f} {x.grad.sum().item():.6f}")
