# source: self-distillation with torch.optim.swa_utils.AveragedModel as the EMA teacher: the teacher forward runs with autograd enabled and ema.update_parameters(model) is called before loss.backward()
# family: E
# expect: ok
# line: 20  (backward: 22)
# fix: (fixed version of E41_averaged_model_teacher_updated_before_backward.py) run the teacher under torch.no_grad() (its output is a target) and/or call ema.update_parameters(model) after optimizer.step()
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

torch.manual_seed(0)


def distill_step(student, teacher, optimizer, x, y, T=2.0):
    s_logits = student(x)
    with torch.no_grad():
        t_logits = teacher(x + 0.05 * torch.randn_like(x))
    kd = F.kl_div(F.log_softmax(s_logits / T, -1), F.softmax(t_logits / T, -1), reduction="batchmean")
    loss = F.cross_entropy(s_logits, y) + kd
    teacher.update_parameters(student)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
    teacher = AveragedModel(student, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05)
    for _ in range(2):
        print("loss", distill_step(student, teacher, optimizer, torch.randn(8, 10), torch.randint(0, 4, (8,))))
