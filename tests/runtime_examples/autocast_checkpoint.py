"""Mixed precision (bf16 autocast on the CPU) and activation checkpointing (reentrant and not)."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
block = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 16))
head = nn.Linear(16, 1)
opt = torch.optim.AdamW(list(block.parameters()) + list(head.parameters()), lr=1e-3)
x = torch.randn(8, 16)
for step, reentrant in enumerate((False, True, False)):
    opt.zero_grad()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inp = x.requires_grad_(reentrant)
        h = checkpoint(block, inp, use_reentrant=reentrant)
        loss = head(h).float().pow(2).mean()
    loss.backward()
    opt.step()
    print("step %d loss %.4f grad %.4f" % (step, loss.item(), head.weight.grad.abs().sum().item()))
