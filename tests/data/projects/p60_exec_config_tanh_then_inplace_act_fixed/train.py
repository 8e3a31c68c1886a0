import argparse

import torch
import torch.nn.functional as F

from lib.config import load_config
from lib.model import make_mlp

parser = argparse.ArgumentParser()
parser.add_argument("--config", default="configs/default.py")
args = parser.parse_args()

cfg = load_config(args.config)
torch.manual_seed(0)
model = make_mlp(10, 3, cfg.model)
optimizer = torch.optim.AdamW(model.parameters(), **cfg.optim)

for it in range(cfg.train["iters"]):
    x = torch.randn(cfg.train["batch_size"], 10)
    y = torch.randint(0, 3, (cfg.train["batch_size"],))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, round(loss.item(), 4))
