"""Word-level LM, truncated BPTT. Run from the repository folder: `python .`"""
import argparse

import torch

from lm.model import RNNModel
from trainer import train_epoch

parser = argparse.ArgumentParser()
parser.add_argument("--bptt", type=int, default=5)
parser.add_argument("--batch_size", type=int, default=4)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()

torch.manual_seed(0)
ntokens = 20
data = torch.randint(0, ntokens, (21, args.batch_size))
model = RNNModel(ntokens, 8, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(args.epochs):
    print(epoch, train_epoch(model, optimizer, data, args.bptt, args.batch_size, ntokens))
