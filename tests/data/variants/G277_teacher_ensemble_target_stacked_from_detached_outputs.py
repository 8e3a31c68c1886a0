# source: knowledge distillation from an ensemble of teachers, target = torch.stack(tuple(t(x).detach() for t in teachers)).mean(0): the teachers are detached on purpose and only the student, whose output keeps its graph, is trained
# family: G
# expect: ok
# verify: the student's weight is compared before and after the steps
# line: 21
# fix: none needed: only the target is detached
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


if __name__ == "__main__":
    teachers = nn.ModuleList(nn.Linear(6, 1) for _ in range(3))
    student = nn.Linear(6, 1)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    x = torch.randn(16, 6)
    before = student.weight.detach().clone()
    for _ in range(3):
        target = torch.stack(tuple(t(x).detach() for t in teachers)).mean(0)
        opt.zero_grad()
        F.mse_loss(student(x), target).backward()
        opt.step()
    print("MISMATCH: the student never moves" if torch.equal(before, student.weight) else "MATCH")
