# source: attention transfer distillation (szagoruyko/attention-transfer: at(x) = normalize(x.pow(2).mean(1))) with the intermediate maps collected by forward hooks, as distillation toolkits do: the student's hook stores output.data like the teacher's, so the attention-transfer term carries no gradient and only the cross-entropy trains the student
# family: H
# expect: silent
# verify: whether the attention-transfer term requires grad: if not, it adds nothing to the student's gradient
# line: 31
# fix: store the student's activations with their graph: student_maps.__setitem__(name, o)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_net(width):
    return nn.Sequential(
        nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU()),
        nn.Sequential(nn.Conv2d(width, width, 3, stride=2, padding=1), nn.ReLU()),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(width, 10))


def attention_map(f):
    return F.normalize(f.pow(2).mean(1).flatten(1), dim=1)


if __name__ == "__main__":
    teacher, student = make_net(16), make_net(4)
    teacher.eval()
    teacher_maps, student_maps = {}, {}
    for name in ("0", "1"):
        teacher.get_submodule(name).register_forward_hook(lambda m, i, o, name=name: teacher_maps.__setitem__(name, o.detach()))
        student.get_submodule(name).register_forward_hook(lambda m, i, o, name=name: student_maps.__setitem__(name, o.data))
    opt = torch.optim.SGD(student.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))
    for step in range(2):
        with torch.no_grad():
            teacher(x)
        logits = student(x)
        at_loss = sum((attention_map(student_maps[k]) - attention_map(teacher_maps[k])).pow(2).mean() for k in student_maps)
        loss = F.cross_entropy(logits, y) + 1000.0 * at_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step", step, "ce+at %.4f" % loss.item())
    print("MATCH" if at_loss.requires_grad else "MISMATCH: the attention-transfer term has no graph, it never reaches the student")
