"""Fine-tuning a tiny BERT on random 'sentences' (run_glue.py, reduced)."""
import argparse

import torch
import torch.nn.functional as F

from engine.optim import build_optimizer
from modeling.tiny_bert import TinyBertForSequenceClassification


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float, default=1e-2)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--max_steps", type=int, default=3)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    model = TinyBertForSequenceClassification()
    optimizer = build_optimizer(model, args.learning_rate, args.weight_decay)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    for step in range(args.max_steps):
        input_ids = torch.randint(0, 50, (4, 6))
        labels = torch.randint(0, 2, (4,))
        loss = F.cross_entropy(model(input_ids), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    # check: every parameter that gets a gradient must have been updated
    frozen = [n for n, p in model.named_parameters() if torch.equal(p, before[n])]
    print("MISMATCH: parameters never updated: " + ", ".join(frozen) if frozen else "MATCH")


if __name__ == "__main__":
    main()
