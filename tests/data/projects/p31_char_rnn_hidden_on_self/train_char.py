import argparse

import torch

from charlm import create
from charlm.trainer import StreamTrainer

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="gru")
parser.add_argument("--chunk", type=int, default=5)
parser.add_argument("--lr", type=float, default=0.1)
args = parser.parse_args()

if __name__ == "__main__":
    torch.manual_seed(0)
    model = create(args.arch, vocab=16)
    trainer = StreamTrainer(model, torch.optim.SGD(model.parameters(), lr=args.lr), args.chunk)
    stream = torch.randint(0, 16, (2, 21))
    for epoch in range(2):
        print(f"epoch {epoch}: {trainer.epoch(stream):.3f}")
