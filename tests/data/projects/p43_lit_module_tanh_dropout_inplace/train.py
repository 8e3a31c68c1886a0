"""Train the text classifier with the project's small Lightning-style trainer."""
import argparse

import torch

from engine.trainer import Trainer
from models.lit_classifier import LitClassifier


def parse_args():
    parser = argparse.ArgumentParser(description="bag-of-embeddings classifier")
    parser.add_argument("--vocab", type=int, default=50)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--max_epochs", type=int, default=2)
    return parser.parse_args()


def make_loader(vocab, classes, batches=4):
    g = torch.Generator().manual_seed(1)
    return [(torch.randint(0, vocab, (8, 6), generator=g), torch.randint(0, classes, (8,), generator=g))
            for _ in range(batches)]


if __name__ == "__main__":
    args = parse_args()
    torch.manual_seed(0)
    model = LitClassifier(args)
    trainer = Trainer(max_epochs=args.max_epochs)
    trainer.fit(model, make_loader(args.vocab, args.classes))
    print("done", trainer.logged)
