"""Ends with the exit status given as its first argument (after a correct backward)."""
import sys

import torch

x = torch.ones(3, requires_grad=True)
(x * 2).sum().backward()
print("grad", x.grad.tolist())
sys.exit(int(sys.argv[1]))
