"""``gradwarden check --fix / --unsafe-fixes / --diff / --fix-only`` end to end (in process)."""
from __future__ import annotations

import codecs
import io
import sys

import pytest

from gradwarden import cli

from fixes_helpers import src

SIGMOID = src("""
    import torch
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.sigmoid(x)
    y += 1  # shift
    y.sum().backward()
""")
GAN = src("""
    import torch
    from torch import nn
    G, D = nn.Linear(4, 6), nn.Linear(6, 1)
    optG = torch.optim.SGD(G.parameters(), lr=0.01)
    optD = torch.optim.SGD(D.parameters(), lr=0.01)
    optG.zero_grad()
    optD.zero_grad()
    fake = G(torch.randn(8, 4))
    errD = D(fake).mean()
    errD.backward()
    optD.step()
    errG = -D(G(torch.randn(8, 4))).mean()
    errG.backward()
    optG.step()
""")


def run(capsys, *args):
    code = cli.main(["check", "--no-progress", "--isolated", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(SIGMOID)
    (tmp_path / "gan.py").write_text(GAN)
    return tmp_path


def test_fix_writes_safe_fixes_and_reports_what_remains(project, capsys):
    code, out, err = run(capsys, "--fix", ".")
    assert (project / "a.py").read_text() == SIGMOID.replace("y += 1", "y = y + 1")
    assert (project / "gan.py").read_text() == GAN  # only an unsafe fix there
    assert "GW503" in out and "GW201" not in out and code == 1
    assert "Applied 1 fix in 1 file(s)." in err


def test_unsafe_fixes_and_second_run_changes_nothing(project, capsys):
    code, out, err = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert code == 0 and "All checks passed!" in out
    assert "D(fake.detach())" in (project / "gan.py").read_text()
    before = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    code, out, err = run(capsys, "--fix", "--unsafe-fixes", ".")
    assert code == 0 and {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()} == before
    assert "Applied" not in err


def test_diff_writes_nothing(project, capsys):
    code, out, err = run(capsys, "--diff", ".")
    assert code == 1
    assert "--- a/a.py\n+++ b/a.py\n" in out and "-y += 1  # shift\n+y = y + 1  # shift\n" in out
    assert "gan.py" not in out  # unsafe
    assert (project / "a.py").read_text() == SIGMOID
    code, out, _ = run(capsys, "--diff", "--unsafe-fixes", "gan.py")
    assert code == 1 and "+errD = D(fake.detach()).mean()" in out
    (project / "a.py").write_text("x = 1\n")
    code, out, _ = run(capsys, "--diff", "a.py")
    assert code == 0 and out == ""


def test_fix_only_reports_nothing_but_the_count(project, capsys):
    code, out, err = run(capsys, "--fix-only", ".")
    assert code == 0 and out == "" and "Applied 1 fix" in err


def test_selection_and_noqa_are_respected(project, capsys):
    (project / "b.py").write_text(SIGMOID.replace("# shift", "# noqa: GW201"))
    code, out, err = run(capsys, "--fix", "--ignore", "GW5", ".")
    assert (project / "b.py").read_text() == SIGMOID.replace("# shift", "# noqa: GW201")
    assert (project / "gan.py").read_text() == GAN


def test_encoding_bom_and_newlines_are_kept(project, capsys):
    latin = ("# -*- coding: latin-1 -*-\r\n# café\r\n" + SIGMOID.replace("\n", "\r\n")).encode("latin-1")
    (project / "l.py").write_bytes(latin)
    bom = codecs.BOM_UTF8 + ("# é\r" + SIGMOID.replace("\n", "\r")).encode("utf-8")
    (project / "m.py").write_bytes(bom)
    run(capsys, "--fix", "l.py", "m.py")
    got = (project / "l.py").read_bytes()
    assert got == latin.replace(b"y += 1", b"y = y + 1")
    got = (project / "m.py").read_bytes()
    assert got == bom.replace(b"y += 1", b"y = y + 1")


def test_stdin_is_fixed_to_stdout(project, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(SIGMOID.encode())))
    code, out, err = run(capsys, "--fix", "-")
    assert out == SIGMOID.replace("y += 1", "y = y + 1")
    assert code == 0


def test_no_fix_flag_leaves_files_alone(project, capsys):
    code, out, _ = run(capsys, ".")
    assert code == 1 and (project / "a.py").read_text() == SIGMOID


def test_options_exist_and_hooks_are_idempotent():
    p = cli.build_parser()
    cli.build_parser()
    args = p.parse_args(["check", "--fix", "--unsafe-fixes", "--diff", "--fix-only"])
    assert args.fix and args.unsafe_fixes and args.diff and args.fix_only
    from gradwarden.fixes.cli import add_fix_options, fix_stage

    assert cli._CHECK_OPTION_HOOKS.count(add_fix_options) == 1
    assert cli._CHECK_STAGES.count(fix_stage) == 1
