import copy

import torch


class MeanTeacher:
    def __init__(self, student, decay=0.99):
        self.teacher = copy.deepcopy(student)
        for p in self.teacher.parameters():
            p.requires_grad_(False)
        self.decay = decay

    @torch.no_grad()
    def update(self, student):
        for t, s in zip(self.teacher.parameters(), student.parameters()):
            t.mul_(self.decay).add_(s, alpha=1 - self.decay)
        for tb, sb in zip(self.teacher.buffers(), student.buffers()):
            tb.copy_(sb)
