import torch.nn.functional as F

from utils import evaluating


class DistillTrainer:
    def __init__(self, student, teacher, optimizer, temperature=2.0):
        self.student = student
        self.teacher = teacher
        self.optimizer = optimizer
        self.t = temperature

    def train_step(self, x):
        with evaluating(self.teacher):
            target = F.softmax(self.teacher(x) / self.t, dim=-1)
        logits = self.student(x)
        loss = F.kl_div(F.log_softmax(logits / self.t, dim=-1), target, reduction="batchmean")
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()
