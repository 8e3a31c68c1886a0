"""Truncated-BPTT language model. Run from the repository folder: `python .`"""
import argparse

import torch

from lm import MODELS
from losses import build_total_loss
from utils import repackage_hidden

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="lstm")
parser.add_argument("--bptt", type=int, default=5)
args = parser.parse_args()

torch.manual_seed(0)
ntokens, bsz = 20, 4
data = torch.randint(0, ntokens, (21, bsz))
model = MODELS[args.model](ntokens, 8)
criterion = build_total_loss([("ce_loss", 1.0), ("zero_reg", 0.1)])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = model.init_hidden(bsz)
for i in range(0, data.size(0) - 1, args.bptt):
    inp, target = data[i:i + args.bptt], data[i + 1:i + 1 + args.bptt].reshape(-1)
    hidden = repackage_hidden(hidden)
    optimizer.zero_grad()
    out, aux, hidden = model(inp, hidden)
    loss = criterion(out, aux, target)
    loss.backward()
    optimizer.step()
    print(i, loss.item())
