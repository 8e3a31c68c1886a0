# source: https://github.com/open-mmlab/mmrazor/pull/100 ("detach output from teacher": with the Self Distiller and channel-wise distillation the teacher tensor, taken from the same network, is not detached); here the deepest stage's feature map is the teacher of a shallow stage
# family: E
# expect: silent
# verify: the deepest stage's gradient is compared with the one obtained when the teacher feature is a constant
# line: 38
# fix: detach the teacher feature in the distillation term: channel_wise_distill(self.adapter(f1), f3.detach())
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def channel_wise_distill(student, teacher, tau=2.0):
    n, c = student.shape[:2]
    s = F.log_softmax(student.reshape(n, c, -1) / tau, dim=-1)
    t = F.softmax(teacher.reshape(n, c, -1) / tau, dim=-1)
    return F.kl_div(s, t, reduction="batchmean") * tau * tau / c


class SelfDistillNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.stage3 = nn.Sequential(nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.adapter = nn.Conv2d(8, 16, 1)
        self.head = nn.Linear(16, 5)

    def forward(self, x):
        f1 = self.stage1(x)
        f3 = self.stage3(self.stage2(f1))
        return self.head(f3.mean(dim=(2, 3))), f1, f3

    def loss(self, x, y, beta=1.0):
        logits, f1, f3 = self(x)
        ce = F.cross_entropy(logits, y)
        return ce + beta * channel_wise_distill(self.adapter(f1), f3), ce, f1, f3


if __name__ == "__main__":
    model = SelfDistillNet()
    x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,))
    total, ce, f1, f3 = model.loss(x, y)
    deep = list(model.stage3.parameters())
    got = torch.autograd.grad(total, deep, retain_graph=True)
    ref_total = ce + channel_wise_distill(model.adapter(f1), f3.detach())
    ref = torch.autograd.grad(ref_total, deep)
    ok = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(got, ref))
    print("MATCH" if ok else "MISMATCH: the distillation term also trains the teacher stages")
