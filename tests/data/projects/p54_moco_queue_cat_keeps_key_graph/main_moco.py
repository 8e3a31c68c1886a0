import argparse

import torch
import torch.nn as nn

import moco
from data.augment import TwoCropsTransform

parser = argparse.ArgumentParser(description="MoCo-style pre-training (reduced)")
parser.add_argument("--moco-dim", default=8, type=int)
parser.add_argument("--moco-k", default=32, type=int)
parser.add_argument("--moco-t", default=0.2, type=float)
parser.add_argument("--lr", default=0.03, type=float)
parser.add_argument("--iters", default=3, type=int)


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    model = moco.QueueContrast(moco.MLPEncoder(dim=args.moco_dim), args.moco_dim, args.moco_k, args.moco_t)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    augment = TwoCropsTransform()
    for i in range(args.iters):
        im_q, im_k = augment(torch.randn(8, 12))
        output, target = model(im_q=im_q, im_k=im_k)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(i, round(loss.item(), 4))


if __name__ == "__main__":
    main()
