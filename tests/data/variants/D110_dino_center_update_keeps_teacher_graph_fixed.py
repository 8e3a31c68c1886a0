# source: https://github.com/lightly-ai/lightly/pull/1844 ("Fix DINOv2 bugs": freeze the teacher) and facebookresearch/dino's DINOLoss.update_center (decorated @torch.no_grad()): with a teacher whose parameters still require grad and a center update written without no_grad, the center carries the teacher graph into the next iteration
# family: D
# expect: ok
# line: 30, 31  (backward: 44)
# fix: (fixed version of D110_dino_center_update_keeps_teacher_graph.py) update the center without a graph (decorate update_center with @torch.no_grad(), or use teacher_output.detach())
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DINOLoss(nn.Module):
    def __init__(self, out_dim, teacher_temp=0.04, student_temp=0.1, center_momentum=0.9):
        super().__init__()
        self.teacher_temp, self.student_temp = teacher_temp, student_temp
        self.center_momentum = center_momentum
        self.register_buffer("center", torch.zeros(1, out_dim))

    def forward(self, student_output, teacher_output):
        teacher_probs = F.softmax((teacher_output - self.center) / self.teacher_temp, dim=-1)
        student_logp = F.log_softmax(student_output / self.student_temp, dim=-1)
        loss = torch.sum(-teacher_probs * student_logp, dim=-1).mean()
        self.update_center(teacher_output)
        return loss

    def update_center(self, teacher_output):
        batch_center = teacher_output.detach().mean(dim=0, keepdim=True)
        self.center = self.center * self.center_momentum + batch_center * (1 - self.center_momentum)


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(24, 32), nn.GELU(), nn.Linear(32, 10))
    teacher = copy.deepcopy(student)
    dino_loss = DINOLoss(10)
    opt = torch.optim.AdamW(student.parameters(), lr=1e-3)
    for it in range(3):
        x = torch.randn(8, 24)
        view1, view2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
        loss = dino_loss(student(view1), teacher(view2))
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for ps, pt in zip(student.parameters(), teacher.parameters()):
                pt.mul_(0.996).add_(ps.detach(), alpha=0.004)
        print("iter", it, "loss", loss.item())
