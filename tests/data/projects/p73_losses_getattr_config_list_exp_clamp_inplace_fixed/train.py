import importlib
import sys

import torch

import losses
from models.denoiser import Denoiser

cfg = importlib.import_module("configs." + (sys.argv[1] if len(sys.argv) > 1 else "denoise"))

torch.manual_seed(0)
model = Denoiser(**cfg.MODEL)
criterion = losses.build_total_loss(cfg.LOSSES)
optimizer = torch.optim.Adam(model.parameters(), lr=cfg.TRAIN["lr"])
for it in range(cfg.TRAIN["iters"]):
    clean = torch.randn(cfg.TRAIN["batch_size"], cfg.MODEL["channels"])
    noisy = clean + 0.1 * torch.randn_like(clean)
    pred, logvar = model(noisy)
    loss = criterion(pred, logvar, clean)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
