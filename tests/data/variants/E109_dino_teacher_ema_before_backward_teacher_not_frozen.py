# source: https://github.com/lightly-ai/lightly/pull/1844 ("Fix DINOv2 bugs: 1. EMA update should happen in on_train_batch_end 2. Freeze the teacher"): the teacher is a copy of the student whose parameters still require grad, and its EMA update runs before loss.backward()
# family: E
# expect: error
# line: 34, 36  (backward: 38)
# fix: run the EMA update after the optimizer step (and freeze/detach the teacher so the loss never backpropagates into it)
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


@torch.no_grad()
def update_momentum(student, teacher, m):
    for ps, pt in zip(student.parameters(), teacher.parameters()):
        pt.mul_(m).add_(ps.detach(), alpha=1 - m)


def dino_loss(student_out, teacher_out, center, t_temp=0.04, s_temp=0.1):
    t = F.softmax((teacher_out - center) / t_temp, dim=-1)
    return torch.sum(-t * F.log_softmax(student_out / s_temp, dim=-1), dim=-1).mean()


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(24, 48), nn.GELU(), nn.Linear(48, 32), nn.GELU(), nn.Linear(32, 16))
    teacher = copy.deepcopy(student)
    center = torch.zeros(1, 16)
    opt = torch.optim.AdamW(student.parameters(), lr=5e-4)
    for it in range(2):
        x = torch.randn(8, 24)
        s_out = student(x + 0.1 * torch.randn_like(x))
        t_out = teacher(x + 0.1 * torch.randn_like(x))
        loss = dino_loss(s_out, t_out, center)
        update_momentum(student, teacher, m=0.996)
        opt.zero_grad()
        loss.backward()
        opt.step()
        center = 0.9 * center + 0.1 * t_out.detach().mean(0, keepdim=True)
        print("iter", it, "loss", loss.item())
