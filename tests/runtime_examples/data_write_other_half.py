"""Writes through .data into the half of a buffer that no saved tensor holds (correct code):
the multiplication saved the left half; the right half is overwritten, then (with --overlap)
a column of the left half too, which silently changes the gradient."""
import sys

import torch

torch.manual_seed(0)
z = torch.randn(4, 4, requires_grad=True)
buf = torch.randn(4, 8)
left = buf[:, :4]
out = (z * left).sum()
buf.data[:, 4:].fill_(0.0)
if "--overlap" in sys.argv:
    buf.data[:, :1].fill_(5.0)
out.backward()
print("grad %.6f" % z.grad.sum().item())
