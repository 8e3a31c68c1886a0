# source: Reptile / first-order MAML re-implementations (OpenAI's Reptile sine-regression demo ported to PyTorch) that take the inner SGD steps by hand with `p -= inner_lr * g` over model.parameters() outside torch.no_grad() ("a leaf Variable that requires grad is being used in an in-place operation")
# family: A
# expect: error
# line: 27
# fix: take the manual inner step without recording it: wrap the update in torch.no_grad()
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def sample_task():
    amp, phase = 0.1 + 4.9 * torch.rand(1).item(), math.pi * torch.rand(1).item()
    x = torch.rand(10, 1) * 10 - 5
    return x, amp * torch.sin(x + phase)


def adapt(model, x, y, inner_lr=0.02, steps=3):
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        grads = torch.autograd.grad(loss, list(model.parameters()))
        for p, g in zip(model.parameters(), grads):
            p -= inner_lr * g
    return loss.item()


if __name__ == "__main__":
    meta_model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 1))
    outer_lr = 0.1
    for it in range(3):
        task_model = copy.deepcopy(meta_model)
        x, y = sample_task()
        loss = adapt(task_model, x, y)
        with torch.no_grad():
            for p_meta, p_task in zip(meta_model.parameters(), task_model.parameters()):
                p_meta += outer_lr * (p_task - p_meta)
        print("iter", it, "inner loss", loss)
