# source: distillation / calibration code that first takes softmax of the raw logits for accuracy/ECE metrics and then divides the logits by the temperature in place for the loss
# family: G
# expect: ok
# line: 19  (backward: 28)
# fix: none needed - softmax saves its output (probs), not its input; the logits are the output of a Linear, which saves its input and weight, so logits /= T rewrites nothing a backward needs
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def kd_step(student, teacher_logits, x, y, T=4.0, alpha=0.5):
    logits = student(x)
    probs = F.softmax(logits, dim=-1)
    acc = (probs.argmax(-1) == y).float().mean()
    conf = probs.max(-1).values.mean()
    hard = F.cross_entropy(logits, y)
    logits /= T
    soft = F.kl_div(F.log_softmax(logits, -1), F.softmax(teacher_logits / T, -1), reduction="batchmean") * T * T
    return alpha * hard + (1 - alpha) * soft + 0.0 * conf, acc


if __name__ == "__main__":
    student = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 5))
    x, y = torch.randn(8, 12), torch.randint(0, 5, (8,))
    loss, acc = kd_step(student, torch.randn(8, 5) * 3, x, y)
    loss.backward()
    print("loss", loss.item(), "acc", acc.item())
