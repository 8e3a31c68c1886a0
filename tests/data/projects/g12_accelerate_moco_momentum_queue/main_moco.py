import argparse

import torch
import torch.nn as nn

from moco import MoCo
from utils.accel import Accelerator

parser = argparse.ArgumentParser(description="MoCo pre-training through the Accelerator wrapper")
parser.add_argument("--lr", default=0.03, type=float)
parser.add_argument("--iters", default=4, type=int)
parser.add_argument("--accum", default=2, type=int)


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    accelerator = Accelerator(gradient_accumulation_steps=args.accum)
    encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(inplace=True), nn.Linear(32, 8))
    model = MoCo(encoder)
    optimizer = torch.optim.SGD(model.encoder_q.parameters(), args.lr, momentum=0.9)
    model, optimizer = accelerator.prepare(model, optimizer)
    criterion = nn.CrossEntropyLoss()
    for i in range(args.iters):
        x = torch.randn(8, 12)
        im_q, im_k = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
        output, target = model(im_q, im_k)
        accelerator.backward(criterion(output, target))
        if (i + 1) % args.accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        accelerator.print(i)


if __name__ == "__main__":
    main()
