"""``gradwarden debug`` as a wrapper of a program (CI relies on this): stdin passes through,
and the exit status is the script's own when it failed, 1 when it succeeded with a confirmed
hazard, 0 when clean, 2 for usage errors, 124 on timeout, 130 when cancelled."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from gradwarden.runtime import DebugResult, Finding
from gradwarden.runtime.cli import exit_status
from runtime_examples.compare import EXAMPLES, GRADWARDEN, debug, plain


def test_stdin_passes_through():
    path = EXAMPLES / "stdin_sum.py"
    p = plain(path, stdin="1 2 3.5\n")
    d = debug(path, stdin="1 2 3.5\n")
    assert p.stdout == "read 3 values, grad [2.0, 4.0, 7.0]\n"
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout) == (0, p.stdout)


@pytest.mark.parametrize("status", [0, 3])
def test_the_scripts_own_exit_status(status):
    path = EXAMPLES / "exit_status.py"
    p, d = plain(path, [str(status)]), debug(path, [str(status)])
    assert p.returncode == status
    assert (d.returncode, d.stdout) == (p.returncode, p.stdout)


def test_a_failing_script_with_a_hazard_keeps_its_own_status(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("import torch\nx = torch.ones(2, requires_grad=True)\ny = x.sigmoid()\ny += 1\n"
                      "y.sum().backward()\n")
    p, d = plain(script), debug(script)
    assert p.returncode == d.returncode == 1
    assert [f["write_site"]["row"] for f in d.findings] == [4]


def test_usage_errors_give_2(tmp_path):
    proc = subprocess.run(GRADWARDEN + ["debug"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "nothing to run" in proc.stderr
    proc = subprocess.run(GRADWARDEN + ["debug", str(tmp_path / "missing.py")], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "script not found" in proc.stderr


def _sleeper(tmp_path):
    script = tmp_path / "sleeps.py"
    script.write_text(textwrap.dedent("""\
        import sys, time
        import torch
        open(sys.argv[1], "w").write("started")
        time.sleep(600)
        """))
    return script


def test_timeout_gives_124(tmp_path):
    script = _sleeper(tmp_path)
    proc = subprocess.run(GRADWARDEN + ["debug", "-q", "--timeout", "20", str(script), str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=300)
    assert (tmp_path / "m").exists()  # the script ran, and was stopped
    assert proc.returncode == 124, proc.stderr


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_cancellation_gives_128_plus_the_signal(tmp_path, sig, status):
    script = _sleeper(tmp_path)
    marker = tmp_path / "m"
    proc = subprocess.Popen(GRADWARDEN + ["debug", "-q", str(script), str(marker)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert marker.exists(), "the script never started"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == status, err
    assert "cancelled" in err


def _result(status, exit_code=None, signal_name=None, findings=()):
    return DebugResult(status=status, message="", exit_code=exit_code, signal=signal_name, findings=list(findings))


def test_exit_status_table():
    hazard = Finding(code="GW201", kind="version-counter", message="m", status="runtime-only")
    warning_only = Finding(code="GW601", kind="data-write", message="m", status="runtime-only", severity="warning")
    not_reached = Finding(code="GW201", kind="version-counter", message="m", status="not reached")
    assert exit_status(_result("ok", 0)) == 0
    assert exit_status(_result("ok", 0, findings=[not_reached])) == 0
    assert exit_status(_result("ok", 0, findings=[hazard])) == 1
    assert exit_status(_result("ok", 0, findings=[warning_only])) == 1
    assert exit_status(_result("stopped", 0, findings=[hazard])) == 1
    assert exit_status(_result("failed", 3, findings=[hazard])) == 3
    assert exit_status(_result("failed", 1)) == 1
    assert exit_status(_result("error")) == 2
    assert exit_status(_result("timeout")) == 124
    assert exit_status(_result("cancelled")) == 130
    assert exit_status(_result("crashed", None, "SIGSEGV")) == 128 + signal.SIGSEGV
    assert exit_status(_result("crashed", None, "SIGABRT")) == 128 + signal.SIGABRT
