"""Fine-tune a pretrained backbone on a 5-class task."""
import argparse

import torch
import torch.nn.functional as F

from models import ConvNet
from utils.optim_factory import create_optimizer

parser = argparse.ArgumentParser()
parser.add_argument("--opt", default="adamw")
parser.add_argument("--lr", type=float, default=1e-2)
parser.add_argument("--weight_decay", type=float, default=0.05)
parser.add_argument("--num_classes", type=int, default=5)
parser.add_argument("--steps", type=int, default=3)


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    model = ConvNet(num_classes=1000)
    optimizer = create_optimizer(args, model)
    model.reset_classifier(args.num_classes)
    head_before = model.head.weight.detach().clone()
    for step in range(args.steps):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, args.num_classes, (4,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
    trained = not torch.equal(head_before, model.head.weight)
    print("MATCH" if trained else "MISMATCH: the new classifier head was never updated")


if __name__ == "__main__":
    main()
