"""Distil a small student from a frozen teacher (CRD-repository layout, reduced)."""
import copy

import torch
import torch.nn as nn

from distill.losses import HintKDLoss
from distill.students import SmallMLP
from distill.teachers import build_teacher


def main(lr=0.05, iters=3):
    teacher = build_teacher()
    reference = copy.deepcopy(teacher)
    torch.manual_seed(0)
    student = SmallMLP()
    criterion_kd = HintKDLoss(teacher)
    trainable_list = nn.ModuleList([student, criterion_kd])
    optimizer = torch.optim.SGD(trainable_list.parameters(), lr=lr, momentum=0.9)
    for it in range(iters):
        x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
        s_feat, s_logits = student(x)
        loss = criterion_kd(x, s_feat, s_logits, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(it, round(loss.item(), 4))
    drifted = any(not torch.equal(p, q) for p, q in zip(teacher.parameters(), reference.parameters()))
    print("MISMATCH: the frozen teacher was trained" if drifted else "MATCH")


if __name__ == "__main__":
    main()
