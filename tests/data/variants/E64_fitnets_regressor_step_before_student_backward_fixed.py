# source: (fixed version of E64_fitnets_regressor_step_before_student_backward.py) FitNets / hint-based knowledge distillation code with a separate optimizer for the hint regressor (adapter) that is stepped on the hint loss before the student's total loss (KD + beta * hint) is backpropagated through the same regressor forward
# family: E
# expect: ok
# line: 45  (backward: 48)
# fix: move self.regressor_opt.step() after total.backward() (both backward passes first, then both steps)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self, width, n_cls=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.fc = nn.Linear(width, n_cls)

    def forward(self, x):
        hint = self.features(x)
        return hint, self.fc(hint)


def kd_loss(s_logits, t_logits, y, T=4.0, alpha=0.9):
    soft = F.kl_div(F.log_softmax(s_logits / T, 1), F.softmax(t_logits / T, 1), reduction="batchmean") * T * T
    return alpha * soft + (1 - alpha) * F.cross_entropy(s_logits, y)


class HintTrainer:
    def __init__(self, student, teacher, beta=0.5):
        self.student, self.teacher, self.beta = student, teacher, beta
        self.regressor = nn.Linear(16, 64)
        self.student_opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
        self.regressor_opt = torch.optim.Adam(self.regressor.parameters(), lr=1e-3)

    def step(self, x, y):
        s_hint, s_logits = self.student(x)
        with torch.no_grad():
            t_hint, t_logits = self.teacher(x)
        hint_loss = F.mse_loss(self.regressor(s_hint), t_hint)
        total = kd_loss(s_logits, t_logits, y) + self.beta * hint_loss

        self.regressor_opt.zero_grad()
        hint_loss.backward(retain_graph=True)

        self.student_opt.zero_grad()
        total.backward()
        self.regressor_opt.step()
        self.student_opt.step()
        return total.item()


if __name__ == "__main__":
    teacher = Net(64).eval()
    trainer = HintTrainer(Net(16), teacher)
    for epoch in range(2):
        x, y = torch.randn(32, 20), torch.randint(0, 10, (32,))
        print("epoch", epoch, "loss %.4f" % trainer.step(x, y))
