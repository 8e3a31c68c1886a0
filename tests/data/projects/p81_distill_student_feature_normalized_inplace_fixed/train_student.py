import torch
import torch.nn.functional as F

from distill.criterion import DistillKL, FeatureCosine
from nets import model_dict


def train_epoch(student, teacher, criteria, optimizer, data):
    cls_crit, kd_crit, feat_crit = criteria
    for x, y in data:
        feat_s, logit_s = student(x, is_feat=True)
        feat_t, logit_t = teacher(x, is_feat=True)
        loss = cls_crit(logit_s, y) + kd_crit(logit_s, logit_t) + feat_crit(feat_s, feat_t)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(loss.item())


def main():
    torch.manual_seed(0)
    teacher = model_dict["teacher"]()
    student = model_dict["student"]()
    teacher.eval()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
    data = [(torch.randn(8, 12), torch.randint(0, 3, (8,))) for _ in range(3)]
    train_epoch(student, teacher, (F.cross_entropy, DistillKL(4.0), FeatureCosine()), optimizer, data)


if __name__ == "__main__":
    main()
