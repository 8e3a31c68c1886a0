# source: feature distillation with forward hooks (the hook pattern of https://github.com/ultralytics/ultralytics/pull/24894: "Hook-based feature capture: identical for teacher and student"); the student's block ends in an in-place ReLU, so its hook stores output.clone() - a copy that keeps the graph - while the teacher's features are detached targets
# family: G
# expect: ok
# line: 19
# fix: none needed - clone() copies the values and keeps the graph; only the teacher's features are detached
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class FeatureHook:
    def __init__(self, module, detach):
        self.detach, self.feat = detach, None
        module.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        self.feat = output.detach().clone() if self.detach else output.clone()


def make_net(width):
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width),
                         nn.Conv2d(width, width, 3, padding=1), nn.ReLU(inplace=True),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 4))


if __name__ == "__main__":
    teacher, student = make_net(8).eval(), make_net(8)
    t_hook, s_hook = FeatureHook(teacher[2], detach=True), FeatureHook(student[2], detach=False)
    opt = torch.optim.SGD(student.parameters(), lr=0.05)
    for step in range(3):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,))
        with torch.no_grad():
            teacher(x)
        logits = student(x)
        loss = F.cross_entropy(logits, y) + F.mse_loss(s_hook.feat, t_hook.feat)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "loss", round(loss.item(), 4))
