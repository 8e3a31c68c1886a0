# source: mean-teacher / BYOL style training where the teacher's EMA update is a method decorated @torch.no_grad() (as in timm's ModelEmaV2): the decorated method only copies weights and is never part of a loss, so the student trains normally
# family: G
# expect: ok
# line: 21
# fix: none needed: the no_grad method is the EMA update, not a term of the loss
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EmaTeacher(nn.Module):
    def __init__(self, student, decay=0.9):
        super().__init__()
        self.module = copy.deepcopy(student).requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, student):
        for t, s in zip(self.module.parameters(), student.parameters()):
            t.mul_(self.decay).add_(s, alpha=1 - self.decay)

    def forward(self, x):
        return self.module(x)


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 4))
    teacher = EmaTeacher(student)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    start = student[0].weight.detach().clone()
    for step in range(3):
        x, y = torch.randn(8, 10), torch.randint(0, 4, (8,))
        logits = student(x)
        with torch.no_grad():
            soft = teacher(x).softmax(-1)
        loss = F.cross_entropy(logits, y) + F.kl_div(logits.log_softmax(-1), soft, reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
        teacher.update(student)
        print("step", step, "loss %.4f" % loss.item())
    moved = not torch.equal(start, student[0].weight.detach())
    print("MATCH" if moved else "MISMATCH: the student never trained")
