import argparse

import torch
import torch.nn.functional as F

from models import create_model

parser = argparse.ArgumentParser()
parser.add_argument("--model", default="vit_tiny")
parser.add_argument("--num-classes", type=int, default=4)
parser.add_argument("--steps", type=int, default=3)

if __name__ == "__main__":
    args = parser.parse_args()
    torch.manual_seed(0)
    model = create_model(args.model, num_classes=args.num_classes)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        x, y = torch.randn(4, 5, 16), torch.randint(0, args.num_classes, (4,))
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
