"""``gradwarden check`` (and the other short-lived commands) end without the interpreter's
teardown of the heap when ``cli.main`` is the process's entry (called by ``__main__``): what the run kept is not freed object by object. What
the interpreter does at exit for others must still happen: ``atexit`` functions run, the
standard streams are flushed (all of the report arrives, through a pipe too), the exit status
is the command's. Other commands (``serve``, ``debug``, a usage error) exit as Python does."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gradwarden import cli

FIXABLE = textwrap.dedent("""\
    import torch
    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    y.add_(1)
    y.sum().backward()
    """)

# Calls cli.main as the console script does, with an atexit function and an object whose
# finaliser runs only when the interpreter tears its modules down.
DRIVER = textwrap.dedent("""\
    import atexit, sys

    class Torn:
        def __del__(self):
            sys.__stderr__.write("TEARDOWN\\n")

    kept = Torn()
    atexit.register(lambda: sys.stdout.write("ATEXIT\\n"))
    sys.argv = ["gradwarden"] + sys.argv[1:]
    from gradwarden.cli import main
    sys.exit(main())
    """)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "driver.py").write_text(DRIVER)
    return subprocess.run([sys.executable, str(tmp_path / "driver.py"), *args], capture_output=True, text=True,
                          cwd=str(tmp_path), timeout=120)


def test_check_skips_the_teardown_but_runs_atexit_and_flushes(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(FIXABLE)
    res = _run(tmp_path, "check", "--no-cache", "--isolated", "--no-progress", "prog.py")
    assert res.returncode == 1, res.stdout + res.stderr  # an error found: the command's status
    assert "GW201" in res.stdout and res.stdout.rstrip().endswith("ATEXIT"), res.stdout
    assert "Found 1 error." in res.stdout
    assert "TEARDOWN" not in res.stderr  # the heap was not torn down


def test_other_commands_exit_as_python_does(tmp_path: Path) -> None:
    res = _run(tmp_path, "--no-such-option")
    assert res.returncode == 2
    assert "ATEXIT" in res.stdout and "TEARDOWN" in res.stderr  # the driver checks itself


def test_main_called_by_another_module_returns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prog.py").write_text(FIXABLE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["gradwarden", "check", "--no-cache", "--isolated", "--no-progress", "prog.py"])
    assert cli.main() == 1  # this process goes on: the caller is not __main__


def test_python_m_gradwarden_skips_the_teardown(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(FIXABLE)
    res = subprocess.run([sys.executable, "-X", "dev", "-m", "gradwarden", "check", "--no-cache", "--isolated",
                          "--no-progress", "prog.py"], capture_output=True, text=True, cwd=str(tmp_path), timeout=120)
    assert res.returncode == 1 and "Found 1 error." in res.stdout, res.stdout + res.stderr


def test_a_closed_pipe_keeps_the_report_lines_written_before(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(FIXABLE)
    (tmp_path / "driver.py").write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(tmp_path / "driver.py"), "check", "--no-cache", "--isolated",
                             "--no-progress", "prog.py"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=str(tmp_path))
    first = proc.stdout.readline()
    proc.stdout.close()
    proc.wait(timeout=120)
    assert b"GW201" in first
    assert proc.returncode in (1, 120)  # 120: the flush at exit met the closed pipe, as Python says
