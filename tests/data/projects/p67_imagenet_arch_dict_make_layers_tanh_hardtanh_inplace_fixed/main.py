"""ImageNet-style training script reduced to a few synthetic batches."""
import argparse

import torch
import torch.nn as nn

import models

model_names = sorted(name for name in models.__dict__
                     if name.islower() and not name.startswith("__")
                     and callable(models.__dict__[name]))

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("-a", "--arch", metavar="ARCH", default="vgg_small", choices=model_names)
parser.add_argument("--lr", default=0.01, type=float)
parser.add_argument("--epochs", default=2, type=int)


def train(loader, model, criterion, optimizer):
    model.train()
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


def main():
    args = parser.parse_args()
    torch.manual_seed(0)
    print("=> creating model '{}'".format(args.arch))
    model = models.__dict__[args.arch]()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), args.lr, momentum=0.9)
    loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(3)]
    for epoch in range(args.epochs):
        print(epoch, train(loader, model, criterion, optimizer))


if __name__ == "__main__":
    main()
