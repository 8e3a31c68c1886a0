# source: Mean Teacher / FixMatch-style consistency training where the EMA teacher is updated in place between the forward passes and the student backward
# family: G
# expect: ok
# line: 18  (backward: 35)
# fix: none needed - the teacher forward ran under torch.no_grad() (its weights are not saved by any graph) and the EMA writes are themselves under no_grad; the student's saved weights are untouched
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.no_grad()
def update_ema(teacher, student, alpha=0.99):
    for t_p, s_p in zip(teacher.parameters(), student.parameters()):
        t_p.mul_(alpha).add_(s_p.detach(), alpha=1 - alpha)


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    for step in range(3):
        x_l, y_l, x_u = torch.randn(4, 10), torch.randint(0, 4, (4,)), torch.randn(8, 10)
        with torch.no_grad():
            t_probs = F.softmax(teacher(x_u + 0.1 * torch.randn_like(x_u)), -1)
        s_logits_u = student(x_u)
        loss = F.cross_entropy(student(x_l), y_l) + F.mse_loss(F.softmax(s_logits_u, -1), t_probs)
        update_ema(teacher, student)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("loss", loss.item())
