import torch
import torch.nn as nn
import torch.nn.functional as F

from heads import BaseHead
from utils.context import evaluating


def main():
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 5))
    body = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
    head = BaseHead.registry["smooth"](16, 5)
    params = list(body.parameters()) + list(head.parameters())
    opt = torch.optim.SGD(params, lr=0.1)
    for _ in range(3):
        x = torch.randn(16, 8)
        with evaluating(teacher):
            target = F.softmax(teacher(x) / 2.0, dim=-1)
        logits = head(body(x))
        loss = F.kl_div(F.log_softmax(logits / 2.0, dim=-1), target, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(loss.item())


if __name__ == "__main__":
    main()
