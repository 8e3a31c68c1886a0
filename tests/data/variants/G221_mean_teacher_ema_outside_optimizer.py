# source: the Mean Teacher / BYOL target network (https://github.com/CuriousAI/mean-teacher): the teacher is a copy whose parameters are not given to the optimizer and are updated by an exponential moving average under no_grad; its predictions are consistency targets
# family: G
# expect: ok
# line: 31
# fix: none needed - every parameter handed to the optimizer is reached by the loss; the teacher is updated by EMA, not by gradients
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def ema_update(teacher, student, decay=0.99):
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.mul_(decay).add_(s, alpha=1 - decay)


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.Adam(student.parameters(), lr=1e-3)
    for step in range(3):
        x_lab, y = torch.randn(8, 8), torch.randint(0, 3, (8,))
        x_unl = torch.randn(16, 8)
        with torch.no_grad():
            target = F.softmax(teacher(x_unl + 0.1 * torch.randn_like(x_unl)), dim=1)
        consistency = F.mse_loss(F.softmax(student(x_unl), dim=1), target)
        loss = F.cross_entropy(student(x_lab), y) + consistency
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema_update(teacher, student)
        print("step", step, "loss", round(loss.item(), 4))
    print("MATCH" if all(p.grad is not None for p in student.parameters()) else "MISMATCH")
