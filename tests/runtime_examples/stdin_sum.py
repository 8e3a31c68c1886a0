"""Reads numbers from stdin and prints the gradient of their squared sum."""
import sys

import torch

values = [float(v) for v in sys.stdin.read().split()]
x = torch.tensor(values, requires_grad=True)
(x * x).sum().backward()
print("read %d values, grad %s" % (len(values), x.grad.tolist()))
