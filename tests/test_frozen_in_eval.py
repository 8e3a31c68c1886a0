"""GW719 (a parameter an optimizer holds that never trains) and a module kept still on purpose.

A distillation criterion that holds its teacher, handed to the optimizer with the student
(``nn.ModuleList([student, criterion])``), takes the teacher's outputs with ``.detach()``: the
teacher's parameters never get a gradient, and the program means it. Whether it means it is not in
the cut itself (an encoder detached by mistake is written the same way) but in the module's mode:
a teacher the program put in ``.eval()`` is frozen on purpose, and GW719 stays silent; the same
program without the ``.eval()`` is reported at the detach. Both are also run under torch: the
teacher's ``.grad`` is None in both, so the rule is about intent, not about what torch does.
(Found as the false alarm on p57's twin, tests/data/projects.) A line ending in ``# <-`` is
where a finding must be reported."""
import subprocess
import sys
import textwrap

import pytest

from marked_cases import findings as _findings, marked as _marked

PROGRAM = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Distill(nn.Module):
    def __init__(self, teacher):
        super().__init__()
        self.teacher = teacher
        self.proj = nn.Linear(4, 6)

    def forward(self, x, s_feat):
        t_feat = self.teacher(x).detach()  # MARK
        return F.mse_loss(self.proj(s_feat), t_feat)


teacher = nn.Sequential(nn.Linear(3, 6), nn.Tanh())EVAL
student = nn.Linear(3, 4)
crit = Distill(teacher)
opt = torch.optim.SGD(nn.ModuleList([student, crit]).parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(8, 3)
    loss = crit(x, student(x))
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _program(in_eval: bool) -> str:
    src = PROGRAM.replace("EVAL", ".eval()" if in_eval else "")
    return src.replace("# MARK", "" if in_eval else "# <-")


@pytest.mark.parametrize("in_eval", [True, False])
def test_a_detached_module_in_eval_mode_is_frozen_on_purpose(in_eval):
    src = _program(in_eval)
    got = [(row, code) for row, code, _ in _findings(src) if code == "GW719"]
    assert got == [(n, "GW719") for n in _marked(src)]
    assert got or in_eval


@pytest.mark.parametrize("in_eval", [True, False])
def test_the_teacher_gets_no_gradient_either_way_under_torch(in_eval):
    probe = "\nprint(all(p.grad is None for p in teacher.parameters()), student.weight.grad is not None)\n"
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(_program(in_eval)) + probe],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "True"]
