import copy

import torch
import torch.nn as nn

from ewc import EWC
from tasks import make_task
from trainer import train_task


def reference_penalty_grads(model, anchor, fisher):
    model.zero_grad()
    loss = 0
    for (n, p), q in zip(model.named_parameters(), anchor.parameters()):
        loss = loss + (fisher[n] * (p - q.detach()) ** 2).sum()
    loss.backward()
    return [p.grad.clone() for p in model.parameters()]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    task_a, task_b = make_task(1), make_task(2)
    train_task(model, optimizer, task_a)
    anchor = copy.deepcopy(model)
    ewc = EWC(model, task_a)
    train_task(model, optimizer, task_b, ewc=ewc)
    model.zero_grad()
    ewc.penalty(model).backward()
    ours = [p.grad.clone() for p in model.parameters()]
    ref = reference_penalty_grads(model, anchor, ewc._precision_matrices)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(ours, ref))
    print("MATCH" if ok else "MISMATCH: the EWC penalty does not pull towards the task-A weights")
