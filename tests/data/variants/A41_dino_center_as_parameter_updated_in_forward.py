# source: DINO-loss reimplementations that declare the teacher centre as nn.Parameter (instead of register_buffer) and update it with an in-place EMA inside forward
# family: A
# expect: error
# line: 24
# fix: register the centre as a buffer (self.register_buffer("center", torch.zeros(1, out_dim))) and update it under torch.no_grad(), as the official DINOLoss does
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DINOLoss(nn.Module):
    def __init__(self, out_dim=16, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.student_temp, self.teacher_temp = student_temp, teacher_temp
        self.center_momentum = center_momentum
        self.center = nn.Parameter(torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        teacher_out = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1).detach()
        loss = torch.sum(-teacher_out * F.log_softmax(student_output / self.student_temp, dim=-1), dim=-1).mean()
        batch_center = teacher_output.mean(dim=0, keepdim=True)
        self.center.mul_(self.center_momentum).add_(batch_center * (1 - self.center_momentum))
        return loss


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 16))
    teacher = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 16))
    for p in teacher.parameters():
        p.requires_grad_(False)
    crit = DINOLoss()
    x = torch.randn(8, 10)
    loss = crit(student(x + 0.1 * torch.randn_like(x)), teacher(x))
    loss.backward()
    print("loss", loss.item())
