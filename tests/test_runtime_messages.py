"""The run confirms the gradient-flow rules (GW7xx) where PyTorch raises or warns: the message
(RuntimeError, ValueError, UserWarning) is mapped to the rule that predicts it through
``gradwarden.rules.messages.TORCH_MESSAGES``, and the static diagnostic becomes confirmed. The
program behaves as it does plainly (same exit status, same output)."""
from __future__ import annotations

import textwrap

import pytest

from gradwarden.runtime.findings import finding_from_raised
from runtime_examples.compare import debug, plain

PROGRAMS = {
    # code: (program, the line where the run sees it, exception or warning)
    # raised at the backward (line 5); the static engine puts the cause where the vector is made
    # (line 4), and the run's finding is shown there too, the raise kept as its backward site
    "GW702": ("""\
        import torch

        w = torch.randn(3, requires_grad=True)
        out = w * 2
        out.backward()
        """, 4, "RuntimeError"),
    "GW706": ("""\
        import torch

        w = torch.randn(3, requires_grad=True)
        scaled = w * 2
        opt = torch.optim.SGD([scaled], lr=0.1)
        """, 5, "ValueError"),
    "GW712": ("""\
        import torch

        x = torch.randn(4, requires_grad=True)
        y = x * 2
        v = y[:2]
        v.detach_()
        """, 6, "RuntimeError"),
    "GW705": ("""\
        import torch

        x = torch.randn(3, requires_grad=True)
        y = x * 2
        y.sum().backward()
        print("grad is", y.grad)
        """, 6, "UserWarning"),
}


@pytest.mark.parametrize("code", sorted(PROGRAMS))
def test_a_raised_message_confirms_its_rule(tmp_path, code):
    text, row, raised = PROGRAMS[code]
    script = tmp_path / f"{code.lower()}.py"
    script.write_text(textwrap.dedent(text))
    p = plain(script, warnings=True)
    d = debug(script, options=(), warnings=True)
    assert (d.returncode, d.stdout) == (p.returncode or 1, p.stdout)  # a warning only: 1, the hazard is confirmed
    assert raised in p.stderr
    found = [f for f in d.findings if f["code"] == code]
    assert [f["status"] for f in found] == ["confirmed"], d.findings
    assert found[0]["runtime"]["row"] == row
    assert found[0]["runtime"]["evidence"]["exception"] == raised
    if code == "GW702":
        assert found[0]["runtime"]["backward_site"]["row"] == 5


def test_unknown_messages_and_terminal_colours():
    assert finding_from_raised({"text": "CUDA out of memory", "exc": "RuntimeError", "site": ["/a.py", 1]}) is None
    f = finding_from_raised({"text": "\x1b[31mCan't detach views in-place\x1b[0m", "exc": "RuntimeError",
                             "site": ["/a.py", 3]})
    assert (f.code, f.kind, f.write_site.row, f.message) == ("GW712", "detach-view", 3,
                                                             "Can't detach views in-place")
    w = finding_from_raised({"text": "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",
                             "exc": "UserWarning", "site": ["/a.py", 7]})
    assert (w.code, w.severity, w.backward_site.row) == ("GW705", "warning", 7)
