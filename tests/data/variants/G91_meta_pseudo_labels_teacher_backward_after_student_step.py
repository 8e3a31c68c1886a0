# source: Meta Pseudo Labels (Pham et al. 2021; kekmodel/MPL-pytorch): the teacher logits are computed first, the student is updated on the teacher's hard pseudo labels, and only then the teacher loss (supervised + MPL feedback term) is backpropagated through the teacher logits computed before the student step
# family: G
# expect: ok
# line: 40  (backward: 46)
# fix: none needed - the teacher graph contains only teacher weights (the pseudo labels are an argmax, the feedback coefficient is computed under no_grad); s_opt.step() rewrites student weights, which the teacher graph never saved
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def mlp(width):
    return nn.Sequential(nn.Linear(10, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4))


def teacher_loss(t_logits_l, t_logits_u, y_l, pseudo, feedback):
    return F.cross_entropy(t_logits_l, y_l) + feedback * F.cross_entropy(t_logits_u, pseudo)


if __name__ == "__main__":
    teacher, student = mlp(64), mlp(32)
    t_opt = torch.optim.SGD(teacher.parameters(), lr=0.05, momentum=0.9)
    s_opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)

    ok = True
    for step in range(3):
        x_l, y_l = torch.randn(16, 10), torch.randint(0, 4, (16,))
        x_u = torch.randn(48, 10)

        t_logits = teacher(torch.cat([x_l, x_u]))
        t_logits_l, t_logits_u = t_logits[:16], t_logits[16:]
        pseudo = t_logits_u.argmax(-1)

        with torch.no_grad():
            s_loss_old = F.cross_entropy(student(x_l), y_l)
        s_loss = F.cross_entropy(student(x_u), pseudo)
        s_opt.zero_grad()
        s_loss.backward()
        s_opt.step()
        with torch.no_grad():
            feedback = s_loss_old - F.cross_entropy(student(x_l), y_l)

        t_loss = teacher_loss(t_logits_l, t_logits_u, y_l, pseudo, feedback)
        t_opt.zero_grad()
        t_loss.backward()

        fresh = teacher(torch.cat([x_l, x_u]))
        ref = torch.autograd.grad(teacher_loss(fresh[:16], fresh[16:], y_l, pseudo, feedback), list(teacher.parameters()))
        ok &= all(torch.allclose(p.grad, r, atol=1e-6) for p, r in zip(teacher.parameters(), ref))
        t_opt.step()
    print("MATCH" if ok else "MISMATCH")
