# source: facebookresearch/dino main_dino.py DINOLoss: update_center is decorated with @torch.no_grad(), and the teacher's parameters have requires_grad=False ("there is no backpropagation through the teacher")
# family: G
# expect: ok
# line: 30
# fix: none needed - the running center is updated without a graph
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, center_momentum=0.9):
        super().__init__()
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output, t_temp=0.04, s_temp=0.1):
        q = F.softmax((teacher_output - self.center) / t_temp, dim=-1)
        loss = torch.sum(-q * F.log_softmax(student_output / s_temp, dim=-1), dim=-1).mean()
        self.update_center(teacher_output)
        return loss

    @torch.no_grad()
    def update_center(self, teacher_output):
        batch_center = teacher_output.mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(24, 32), nn.GELU(), nn.Linear(32, 10))
    teacher = copy.deepcopy(student)
    for p in teacher.parameters():
        p.requires_grad = False
    criterion = DINOLoss(10)
    opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
    for it in range(3):
        x = torch.randn(8, 24)
        loss = criterion(student(x + 0.1 * torch.randn_like(x)), teacher(x + 0.1 * torch.randn_like(x)))
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for ps, pt in zip(student.parameters(), teacher.parameters()):
                pt.mul_(0.996).add_((1 - 0.996) * ps.detach())
        print("iter", it, "loss", loss.item())
