import argparse

import torch
import torch.nn.functional as F

import models
from config import Config
from utils.ema import MeanTeacher

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="vgg_small_bn")
parser.add_argument("--lr", type=float, default=0.05)


def main():
    cfg = Config(**vars(parser.parse_args()))
    torch.manual_seed(0)
    student = models.__dict__[cfg.arch]()
    ema = MeanTeacher(student)
    optimizer = torch.optim.SGD(student.parameters(), lr=cfg.lr, momentum=0.9)
    for step in range(cfg.steps):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 10, (4,))
        logits = student(x)
        with torch.no_grad():
            target = F.softmax(ema.teacher(x + 0.05 * torch.randn_like(x)), dim=1)
        loss = F.cross_entropy(logits, y) + cfg.consistency * F.mse_loss(F.softmax(logits, dim=1), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(student)
        print(step, loss.item())


if __name__ == "__main__":
    main()
