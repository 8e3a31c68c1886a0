# source: https://github.com/yoshitomo-matsubara/torchdistill/pull/16 ("Allow more flexible cache features": teacher outputs cached per sample index and reused in later epochs); with a teacher whose parameters still require grad the cached logits carry the first epoch's graph, and the second epoch's backward reaches it
# family: D
# expect: error
# line: 27  (backward: 31)
# fix: cache the teacher outputs without a graph: cache[batch_idx] = teacher(x).detach() (or compute them under torch.no_grad())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def kd_loss(student_logits, teacher_logits, T=4.0):
    return F.kl_div(F.log_softmax(student_logits / T, dim=1), F.softmax(teacher_logits / T, dim=1),
                    reduction="batchmean") * T * T


if __name__ == "__main__":
    teacher = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).eval()
    student = nn.Sequential(nn.Linear(20, 16), nn.ReLU(), nn.Linear(16, 5))
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    batches = [(torch.randn(8, 20), torch.randint(0, 5, (8,))) for _ in range(3)]
    cache = {}
    for epoch in range(2):
        for batch_idx, (x, y) in enumerate(batches):
            if batch_idx not in cache:
                cache[batch_idx] = teacher(x)
            s_logits = student(x)
            loss = 0.5 * F.cross_entropy(s_logits, y) + 0.5 * kd_loss(s_logits, cache[batch_idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print("epoch", epoch, "loss", loss.item())
