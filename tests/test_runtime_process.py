"""The runtime bridge as a process manager: timeouts, cancellation, output, crashes, forks,
interpreters without torch, launchers (torchrun on CPU with gloo, templates), the CLI, the
async API. Every test runs real child processes on the CPU."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gradwarden.runtime import (
    STATUS_CANCELLED,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_STOPPED,
    STATUS_TIMEOUT,
    DebugError,
    DebugOptions,
    DebugSession,
    Target,
    run_debug,
)
from gradwarden.runtime.session import Zygote

GRADWARDEN = [sys.executable, "-m", "gradwarden"]

HAZARD = """\
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.sigmoid(x)
y += 1
y.sum().backward()
"""


@pytest.fixture(scope="module")
def zygote():
    with Zygote() as z:
        yield z


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not os.path.isdir("/proc")


def wait_gone(pids, seconds=120.0):  # seconds: a hang guard, not a speed limit
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.1)
    return not any(alive(p) for p in pids)


def wait_file(path: Path, seconds=300.0) -> str:  # seconds: a hang guard
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


TREE = """\
import os, subprocess, sys, time
import torch
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
pid = os.fork()
if pid == 0:
    time.sleep(600)
    os._exit(0)
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(f"{os.getpid()} {child.pid} {pid}")
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    time.sleep(0.1)
"""


# --------------------------------------------------------------------------- timeout, cancel
def test_cancellation_kills_the_whole_process_tree(tmp_path):
    script = write(tmp_path, "tree.py", TREE)
    marker = tmp_path / "pids"
    session = DebugSession(Target.script(str(script), [str(marker)]), DebugOptions(output="discard"))
    session.start()
    pids = [int(p) for p in wait_file(marker).split()]
    assert all(alive(p) for p in pids)
    session.cancel()
    result = session.wait(60)
    assert result is not None and result.status == STATUS_CANCELLED
    assert wait_gone(pids + [session.pid]), [p for p in pids if alive(p)]


def test_timeout_stops_the_run_and_its_children(tmp_path, zygote):
    script = write(tmp_path, "tree.py", TREE)
    marker = tmp_path / "pids"
    session = DebugSession(Target.script(str(script), [str(marker)]),
                           DebugOptions(output="discard", timeout=5, grace=1), zygote=zygote)
    session.start()
    result = session.wait(300)  # a hang guard only: the script itself would run forever
    assert result is not None and result.status == STATUS_TIMEOUT, result
    pids = [int(p) for p in marker.read_text().split()] if marker.exists() else []
    assert wait_gone(pids + [session.pid])
    assert "timed out" in result.message


# --------------------------------------------------------------------------- output
def test_megabytes_of_output_pass_through_the_cli(tmp_path):
    script = write(tmp_path, "loud.py", """\
        import sys
        import torch
        line = "x" * 1023 + "\\n"
        for _ in range(8 * 1024):
            sys.stdout.write(line)
        sys.stderr.write("E" * 100000 + "\\n")
        """)
    out = subprocess.run(GRADWARDEN + ["debug", "-q", str(script)], capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.count(b"x" * 1023 + b"\n") == 8 * 1024
    assert b"E" * 100000 in out.stderr
    assert b"the target finished" in out.stderr  # the report is not mixed into the program's stdout


def test_megabytes_of_output_go_to_the_log_not_the_caller(tmp_path, capfd):
    script = write(tmp_path, "loud.py", """\
        import torch
        for _ in range(8 * 1024):
            print("y" * 1023)
        """)
    log = tmp_path / "run.log"
    result = run_debug(Target.script(str(script)), DebugOptions(output="log", log_path=str(log)))
    assert result.status == STATUS_OK
    assert log.stat().st_size >= 8 * 1024 * 1024
    captured = capfd.readouterr()
    assert "y" * 1023 not in captured.out and "y" * 1023 not in captured.err


# --------------------------------------------------------------------------- crashes, forks
def test_abort_is_reported_as_a_crash(tmp_path):
    script = write(tmp_path, "abort.py", """\
        import os
        import torch
        x = torch.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        os.abort()
        """)
    result = run_debug(Target.script(str(script)), DebugOptions(output="discard"))
    assert result.status == STATUS_CRASHED
    assert result.signal == "SIGABRT"
    assert result.crash and "Aborted" in result.crash and "abort.py" in result.crash
    assert result.backward_calls == 1


def test_a_script_that_forks(tmp_path):
    script = write(tmp_path, "forks.py", """\
        import os, sys, time
        import torch
        pid = os.fork()
        if pid == 0:
            with open(sys.argv[1], "w") as fh:
                fh.write(str(os.getpid()))
            time.sleep(300)  # a straggler the run must not wait for
            os._exit(0)
        while not os.path.exists(sys.argv[1]):
            time.sleep(0.05)
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.sigmoid(x)
        y += 1
        y.sum().backward()
        """)
    marker = tmp_path / "forked"
    result = run_debug(Target.script(str(script), [str(marker)]), DebugOptions(output="discard", timeout=120))
    # Not timed out: the run ended with the script, not with the straggler (300 s > timeout).
    assert result.status == STATUS_FAILED
    errors = [f for f in result.runtime_findings if f.code == "GW201"]
    assert len(errors) == 1 and errors[0].write_site.row == 13
    assert wait_gone([int(marker.read_text())])


def test_segfault_in_native_code(tmp_path, zygote):
    script = write(tmp_path, "segv.py", """\
        import ctypes
        import torch
        ctypes.string_at(0)
        """)
    session = DebugSession(Target.script(str(script)), DebugOptions(output="discard"), zygote=zygote)
    result = session.start().wait(120)
    assert result.status == STATUS_CRASHED and result.signal == "SIGSEGV"
    assert "Segmentation fault" in (result.crash or "")


# --------------------------------------------------------------------------- interpreters
def test_missing_interpreter(tmp_path):
    script = write(tmp_path, "s.py", HAZARD)
    with pytest.raises(DebugError, match="interpreter not found"):
        DebugSession(Target.script(str(script)), DebugOptions(python=str(tmp_path / "nope" / "python"))).start()
    out = subprocess.run(GRADWARDEN + ["debug", "--python", str(tmp_path / "nope"), str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "interpreter not found" in out.stderr


def test_interpreter_without_torch(tmp_path):
    script = write(tmp_path, "s.py", HAZARD)
    python = tmp_path / "python-without-torch"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')  # -S: no site-packages, no torch
    python.chmod(0o755)
    result = run_debug(Target.script(str(script)), DebugOptions(python=str(python), output="discard"))
    assert result.status == STATUS_ERROR
    assert "torch is not installed in" in result.error and "--python" in result.error
    out = subprocess.run(GRADWARDEN + ["debug", "--python", str(python), str(script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.count("torch is not installed in") == 1, out.stderr
    assert "finding(s)" not in out.stderr + out.stdout  # nothing ran: no summary
    with pytest.raises(DebugError, match="torch is not installed"):
        Zygote(python=str(python)).start()


def test_missing_script():
    with pytest.raises(DebugError, match="script not found"):
        DebugSession(Target.script("/no/such/script.py")).start()


# --------------------------------------------------------------------------- launchers
DDP = """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("gloo")
torch.manual_seed(0)
model = DDP(torch.nn.Linear(4, 4))
y = torch.sigmoid(model(torch.randn(8, 4)))
y *= 2
y.sum().backward()
dist.destroy_process_group()
"""


def test_torchrun_two_processes_on_cpu(tmp_path):
    script = write(tmp_path, "ddp.py", DDP)
    result = run_debug(Target.script(str(script)),
                       DebugOptions(launcher="torchrun", nproc_per_node=2, output="discard", device="cpu",
                                    timeout=240))
    assert result.ranks == ("0", "1"), result
    hits = [f for f in result.findings if f.code == "GW201"]
    assert len(hits) == 1, [f.to_json() for f in result.findings]
    assert hits[0].write_site.row == 9 and hits[0].save_site.row == 8 and hits[0].backward_site.row == 10
    assert hits[0].ranks == (0, 1)
    assert hits[0].status in ("confirmed", "runtime-only")  # the static engine may not see through DDP


def test_launcher_template(tmp_path):
    script = write(tmp_path, "s.py", "import os\nassert os.environ['GW_VIA_TEMPLATE'] == '1'\n" + HAZARD)
    out = tmp_path / "findings.json"
    proc = subprocess.run(GRADWARDEN + ["debug", "-q", "--json", str(out), "--launcher-template",
                                        "env GW_VIA_TEMPLATE=1 {cmd}", "--results-dir", str(tmp_path / "res"),
                                        str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    data = json.loads(out.read_text())
    assert [(f["code"], f["status"], f["write_site"]["row"]) for f in data] == [("GW201", "confirmed", 6)]
    assert list((tmp_path / "res").glob("events.*.jsonl"))  # the findings came back as files


# --------------------------------------------------------------------------- targets and options
def test_max_steps_stops_the_run(tmp_path, zygote):
    script = write(tmp_path, "loop.py", """\
        import torch
        w = torch.ones(3, requires_grad=True)
        for i in range(1000):
            (w * i).sum().backward()
        raise SystemExit("should have been stopped")
        """)
    session = DebugSession(Target.script(str(script)), DebugOptions(output="discard", max_steps=3), zygote=zygote)
    result = session.start().wait(120)
    assert result.status == STATUS_STOPPED and result.backward_calls == 3


def test_pytest_target(tmp_path, zygote):
    write(tmp_path, "test_model.py", """\
        import torch


        def test_ok():
            assert True


        def test_hazard():
            x = torch.ones(3, requires_grad=True)
            h = torch.exp(x)
            h[0] = 0
            h.sum().backward()
        """)
    session = DebugSession(Target.pytest("test_model.py::test_hazard", ["-q"], cwd=str(tmp_path)),
                           DebugOptions(output="discard"), zygote=zygote)
    result = session.start().wait(120)
    assert result.status == STATUS_FAILED and result.exit_code == 1
    hits = [f for f in result.runtime_findings if f.code == "GW201"]
    assert hits and hits[0].write_site.row == 11 and hits[0].save_site.row == 10


def test_module_target_and_static_verdicts(tmp_path, zygote):
    write(tmp_path, "pkg/__init__.py", "")
    write(tmp_path, "pkg/train.py", """\
        import sys
        import torch
        from pkg.helpers import leaf_update


        def never_called():
            x = torch.ones(2, requires_grad=True)
            y = torch.sigmoid(x)
            y += 1
            y.sum().backward()


        w = torch.zeros(3, requires_grad=True)
        if len(sys.argv) > 5:
            w.add_(1)
        leaf_update(w)
        """)
    write(tmp_path, "pkg/helpers.py", """\
        def leaf_update(w):
            w.mul_(2)
        """)
    session = DebugSession(Target.module("pkg.train", cwd=str(tmp_path)), DebugOptions(output="discard"),
                           zygote=zygote)
    result = session.start().wait(120)
    assert result.status == STATUS_FAILED
    by = {(Path(f.filename).name, f.row): (f.code, f.status) for f in result.findings}
    assert by[("train.py", 9)] == ("GW201", "not reached")  # never called
    assert by[("train.py", 15)] == ("GW101", "not reached")  # branch not taken
    assert by[("helpers.py", 2)] == ("GW101", "runtime-only") or by[("helpers.py", 2)][1] == "confirmed"


def test_not_reproduced(tmp_path, zygote):
    script = write(tmp_path, "maybe.py", """\
        import torch
        x = torch.ones(3, requires_grad=True)
        y = torch.sigmoid(x)
        y += 1
        try:
            y.sum().backward()
        except RuntimeError:
            pass
        w = torch.ones(3, requires_grad=True)
        z = w * 2
        z.add_(1)
        z.sum().backward()
        """)
    session = DebugSession(Target.script(str(script)), DebugOptions(output="discard"), zygote=zygote)
    result = session.start().wait(120)
    assert result.status == STATUS_OK
    by = {f.row: f for f in result.findings}
    assert by[4].status == "confirmed" and by[4].runtime.write_site.row == 4


def test_cli_json_and_exit_codes(tmp_path):
    script = write(tmp_path, "s.py", HAZARD)
    proc = subprocess.run(GRADWARDEN + ["debug", "--json", "-", str(script)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert len(data) == 1
    f = data[0]
    assert f["code"] == "GW201" and f["kind"] == "version-counter" and f["status"] == "confirmed"
    assert f["write_site"] == {"filename": str(script), "row": 4}
    assert f["save_site"]["row"] == 3 and f["backward_site"]["row"] == 5
    assert "message" in f
    assert "write     " in proc.stderr  # the text report goes to stderr with --json -
    ok = write(tmp_path, "ok.py", "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).sum().backward()\n")
    proc = subprocess.run(GRADWARDEN + ["debug", "-q", str(ok)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run(GRADWARDEN + ["debug"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "nothing to run" in proc.stderr


def test_async_api_with_progress(tmp_path, zygote):
    script = write(tmp_path, "s.py", HAZARD)
    stages = []

    async def main():
        loop = asyncio.get_running_loop()
        session = DebugSession(Target.script(str(script)), DebugOptions(output="discard"),
                               on_progress=lambda p: stages.append((p.stage, threading_ok(loop))),
                               loop=loop, zygote=zygote)
        session.start()
        ticks = 0
        waiter = asyncio.ensure_future(session.wait_async())
        while not waiter.done():  # the loop stays responsive while the run goes on
            ticks += 1
            await asyncio.sleep(0.01)
        return await waiter, ticks

    result, ticks = asyncio.run(main())
    assert ticks > 5
    assert result.status == STATUS_FAILED
    assert [f.code for f in result.findings] == ["GW201"]
    names = [s for s, _ in stages]
    assert names[0] == "starting" and "finding" in names and names[-1] == "done"
    assert all(on_loop for _, on_loop in stages)
    diag = result.findings[0].to_diagnostic()
    assert diag.code == "GW201" and any(r.kind == "write" for r in diag.related)


def threading_ok(loop) -> bool:
    """True when called on the loop's thread."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def test_session_cannot_start_twice(tmp_path, zygote):
    script = write(tmp_path, "s.py", "import torch\n")
    session = DebugSession(Target.script(str(script)), DebugOptions(output="discard"), zygote=zygote)
    session.start()
    with pytest.raises(DebugError):
        session.start()
    assert session.wait(120).status == STATUS_OK
