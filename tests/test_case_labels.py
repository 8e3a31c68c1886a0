"""Prove every labelled case's label by running it under torch.

Each case is a standalone program; it runs as ``sys.executable CASE.py`` in a subprocess
(timeout 120 s) and its outcome must match its ``# expect:`` header:

- ``error``  -> exits non-zero with a ``RuntimeError`` in stderr;
- ``silent`` -> exits 0 and prints ``MISMATCH`` (its own gradient check failed);
- ``ok``     -> exits 0 and prints no ``MISMATCH``.

All selected cases are started in parallel (one at a time per core) when the first case test
runs; each per-case test then waits for its own result, so ``-k`` selects what is run and
failures are reported per file. ``import torch`` costs about 1.3 s a process, so by default a
server process (``sys.executable``) imports torch once and forks one child per case, which runs
the file as ``__main__`` as ``python CASE.py`` would (about 35 s for 108 cases on 2 cores,
against about 95 s fresh). A case whose warm outcome contradicts its label is re-run the
reference way, ``sys.executable CASE.py`` in a fresh process, and judged on that run alone.
``GRADWARDEN_CASE_RUN=fresh`` runs every case that way.

A wrong label is a finding to report, not a reason to edit the case.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

import pytest

from case_support import (
    KNOWN_EXPECTS,
    Case,
    case_params,
    cases_dir_path,
    read_header,
    require_case,
    scorer_path,
)

CASE_TIMEOUT_S = 120
TAIL = 1500
# "fresh": one `python CASE.py` per case (about 1.3 s of `import torch` each);
# default "warm": a server imports torch once and forks a child per case (see _WARM_SERVER).
MODE_ENV = "GRADWARDEN_CASE_RUN"


def _workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 2
    return max(1, min(n, 8))


@dataclass
class RunResult:
    returncode: Optional[int]  # None: timed out
    stdout: str
    stderr: str
    seconds: float
    mode: str = "fresh"

    def describe(self) -> str:
        rc = "timed out" if self.returncode is None else f"exit code {self.returncode}"
        return (
            f"{rc} after {self.seconds:.1f}s ({self.mode} run)\n--- stdout (tail) ---\n"
            f"{self.stdout[-TAIL:]}\n--- stderr (tail) ---\n{self.stderr[-TAIL:]}"
        )


def label_holds(expect: str, res: RunResult) -> bool:
    if expect == "error":
        return res.returncode not in (None, 0) and "RuntimeError" in res.stderr
    if expect == "silent":
        return res.returncode == 0 and "MISMATCH" in res.stdout
    return res.returncode == 0 and "MISMATCH" not in res.stdout and "MISMATCH" not in res.stderr


WANT = {
    "error": "a non-zero exit with a RuntimeError in stderr",
    "silent": "exit 0 with MISMATCH printed",
    "ok": "exit 0 without MISMATCH",
}


def run_case(path: Path, cwd: Path) -> RunResult:
    """The reference way: `sys.executable CASE.py` in a fresh process."""
    env = dict(os.environ)
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, str(path)],
            cwd=str(cwd),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CASE_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        def _s(x):
            return x.decode("utf-8", "replace") if isinstance(x, bytes) else (x or "")

        return RunResult(None, _s(exc.stdout), _s(exc.stderr), time.monotonic() - start)
    return RunResult(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


# Run by `sys.executable -c`: imports torch once, then forks one child per case, each running
# the case as `__main__` (like `python CASE.py`: argv, sys.path[0], uncaught exception ->
# traceback on stderr and exit 1) with stdout/stderr in files. Up to `workers` children at
# once, each killed after `timeout` s. One JSON line per finished case on the server's stdout.
_WARM_SERVER = r"""
import json, os, signal, sys, time
spec = json.loads(sys.stdin.read())
import torch  # noqa: F401  (the point: pay for this once)
results = os.fdopen(os.dup(1), "w", buffering=1)
devnull = os.open(os.devnull, os.O_RDONLY)


def child(i, path):
    code = 1
    try:
        out = os.open(os.path.join(spec["outdir"], "%d.out" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(os.path.join(spec["outdir"], "%d.err" % i), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(devnull, 0); os.dup2(out, 1); os.dup2(err, 2)
        os.chdir(spec["cwd"])
        import atexit, runpy, threading
        sys.argv = [path]
        sys.path[0] = os.path.dirname(os.path.abspath(path))
        try:
            runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                sys.stderr.write(str(e.code) + "\n"); code = 1
        except BaseException:
            sys.excepthook(*sys.exc_info()); code = 1
        try:
            threading._shutdown()
            atexit._run_exitfuncs()
        except BaseException:
            sys.excepthook(*sys.exc_info())
        sys.stdout.flush(); sys.stderr.flush()
    finally:
        os._exit(code & 0xFF)


pending = list(enumerate(spec["cases"]))
running = {}
while pending or running:
    while pending and len(running) < spec["workers"]:
        i, path = pending.pop(0)
        sys.stdout.flush(); sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            child(i, path)
        running[pid] = [i, path, time.monotonic(), False]
    pid, status = os.waitpid(-1, os.WNOHANG)
    if pid == 0:
        now = time.monotonic()
        for p, r in running.items():
            if not r[3] and now - r[2] > spec["timeout"]:
                os.kill(p, signal.SIGKILL); r[3] = True
        time.sleep(0.005)
        continue
    i, path, t0, killed = running.pop(pid)
    results.write(json.dumps({"i": i, "path": path, "rc": os.waitstatus_to_exitcode(status),
                              "timed_out": killed, "seconds": time.monotonic() - t0}) + "\n")
"""


class CaseRunner:
    """Runs the selected cases in parallel, once per session, on first demand.

    Warm mode (default on POSIX): one server process imports torch once and forks a child
    per case. Any case whose warm outcome does not match its label is re-run the reference
    way (a fresh ``sys.executable CASE.py``) and judged on that, so the warm mode can only
    save time, never decide a failure. ``GRADWARDEN_CASE_RUN=fresh`` runs every case fresh.
    """

    def __init__(self, cases: List[Case], workdir: Path):
        self._cases = cases
        self._cwd = workdir / "cwd"
        self._outdir = workdir / "out"
        self._cwd.mkdir(parents=True, exist_ok=True)
        self._outdir.mkdir(parents=True, exist_ok=True)
        self._futures: Dict[str, "Future[RunResult]"] = {}
        self._pool: Optional[ThreadPoolExecutor] = None
        self._server: Optional[subprocess.Popen] = None
        self._reader: Optional[threading.Thread] = None
        self.started = 0.0
        self.reruns: List[str] = []
        self.mode = os.environ.get(MODE_ENV, "warm").strip().lower()
        if self.mode != "fresh" and not hasattr(os, "fork"):
            self.mode = "fresh"

    def _start(self) -> None:
        self.started = time.monotonic()
        self._pool = ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="case")
        # Biggest files first, to keep every core busy to the end.
        order = sorted(self._cases, key=lambda c: -c.path.stat().st_size)
        if self.mode == "fresh":
            for case in order:
                self._futures[case.rel] = self._pool.submit(run_case, case.path, self._cwd)
            return
        for case in order:
            self._futures[case.rel] = Future()
        spec = {
            "cases": [str(c.path) for c in order],
            "cwd": str(self._cwd),
            "outdir": str(self._outdir),
            "workers": _workers(),
            "timeout": CASE_TIMEOUT_S,
        }
        env = dict(os.environ)
        self._server_log = open(self._outdir / "server.err", "w")
        self._server = subprocess.Popen(
            [sys.executable, "-c", _WARM_SERVER],
            cwd=str(self._cwd),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._server_log,
            text=True,
        )
        assert self._server.stdin is not None
        self._server.stdin.write(json.dumps(spec))
        self._server.stdin.close()
        self._reader = threading.Thread(target=self._read_server, args=(order,), daemon=True)
        self._reader.start()

    def _read_server(self, order: List[Case]) -> None:
        assert self._server is not None and self._server.stdout is not None
        try:
            for line in self._server.stdout:
                try:
                    msg = json.loads(line)
                    case = order[msg["i"]]
                except (ValueError, KeyError, IndexError):
                    continue
                out = (self._outdir / f"{msg['i']}.out").read_text("utf-8", "replace")
                err = (self._outdir / f"{msg['i']}.err").read_text("utf-8", "replace")
                rc = None if msg.get("timed_out") else msg["rc"]
                fut = self._futures[case.rel]
                if not fut.done():
                    fut.set_result(RunResult(rc, out, err, float(msg["seconds"]), "warm"))
        finally:
            self._server.wait()
            # Whatever the server did not finish (it crashed?) is run the reference way.
            assert self._pool is not None
            for case in order:
                fut = self._futures[case.rel]
                if not fut.done():
                    self._pool.submit(self._fresh_into, case, fut)

    def _fresh_into(self, case: Case, fut: "Future[RunResult]") -> None:
        try:
            fut.set_result(run_case(case.path, self._cwd))
        except BaseException as exc:  # pragma: no cover
            fut.set_exception(exc)

    def result(self, case: Case) -> RunResult:
        if self._pool is None:
            self._start()
        fut = self._futures.get(case.rel)
        res = run_case(case.path, self._cwd) if fut is None else fut.result()
        if res.mode != "fresh" and not label_holds(case.expect, res):
            self.reruns.append(case.rel)
            res = run_case(case.path, self._cwd)  # the reference run decides
        return res

    def close(self) -> Optional[str]:
        if self._pool is None:
            return None
        if self._server is not None and self._server.poll() is None:
            self._server.kill()
        self._pool.shutdown(wait=False, cancel_futures=True)
        total = time.monotonic() - self.started
        note = f"; re-run fresh: {', '.join(self.reruns)}" if self.reruns else ""
        return (
            f"[case labels] {len(self._futures)} cases in {total:.1f}s, {self.mode} mode, "
            f"{_workers()} workers{note}"
        )


@pytest.fixture(scope="session")
def case_runner(request, tmp_path_factory):
    # Only the cases whose label test is selected in this session are run.
    selected: List[Case] = []
    seen = set()
    for item in request.session.items:
        if getattr(item, "originalname", None) != "test_case_label":
            continue
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        if isinstance(case, Case) and case.rel not in seen:
            seen.add(case.rel)
            selected.append(case)
    runner = CaseRunner(selected, tmp_path_factory.mktemp("case_labels"))
    yield runner
    summary = runner.close()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capman = request.config.pluginmanager.get_plugin("capturemanager")
    if summary and reporter is not None:
        if capman is not None:  # past the capture of this teardown
            with capman.global_and_fixture_disabled():
                reporter.write_line("")
                reporter.write_line(summary)
        else:
            reporter.write_line(summary)


@pytest.mark.parametrize("case", case_params())
def test_case_label(case: Optional[Case], case_runner: CaseRunner) -> None:
    case = require_case(case)
    assert case.expect in KNOWN_EXPECTS, f"{case}: unknown `# expect: {case.expect}`"
    res = case_runner.result(case)
    if not label_holds(case.expect, res):
        pytest.fail(
            f"{case} is labelled `expect: {case.expect}` ({WANT[case.expect]}) but torch gave: "
            f"{res.describe()}",
            pytrace=False,
        )


# --- header sanity -------------------------------------------------------------------


def test_cases_directory_present(cases_dir: Path, all_cases: List[Case]) -> None:
    hazards = [c for c in all_cases if c.is_hazard]
    oks = [c for c in all_cases if c.expect == "ok"]
    assert hazards and oks, f"{cases_dir}: expected both hazard and ok cases, got {len(hazards)}/{len(oks)}"


@pytest.mark.parametrize("case", case_params())
def test_case_header(case: Optional[Case]) -> None:
    case = require_case(case)
    n_lines = len(case.path.read_text(encoding="utf-8", errors="replace").splitlines())
    assert case.expect in KNOWN_EXPECTS, f"{case}: unknown `# expect: {case.meta.get('expect')}`"
    assert case.family in tuple("ABCDEFG"), f"{case}: family {case.meta.get('family')!r} is not A..G"
    if case.is_hazard:
        assert case.cause_lines, f"{case}: a hazard case needs `# line: N` (the line to flag)"
    for n in sorted(case.cause_lines | case.neutral_lines):
        if case.is_hazard:
            assert 1 <= n <= n_lines, f"{case}: `# line:` names line {n}, file has {n_lines}"


def _hazard_in_real(c: Case) -> bool:
    return c.rel.startswith("real/") and c.is_hazard and not c.rel.endswith("_fixed.py")


@pytest.mark.parametrize("case", case_params(_hazard_in_real))
def test_fixed_twin_labelled_ok(case: Optional[Case]) -> None:
    """Every hazard ``real/X.py`` has an ``X_fixed.py`` twin (README) labelled ``ok``; that the
    twin really is ok is proven by its own ``test_case_label``."""
    case = require_case(case)
    twin = case.path.with_name(case.path.stem + "_fixed.py")
    assert twin.is_file(), f"{case}: hazard without its `{twin.name}` twin"
    meta = read_header(twin)
    expect = str(meta.get("expect", "")).split()
    assert expect and expect[0].lower() == "ok", (
        f"{twin.name}: the fixed twin of {case} must be labelled `expect: ok`, "
        f"got {meta.get('expect')!r}"
    )


def test_header_parser_matches_scorer(all_cases: List[Case]) -> None:
    """conftest's header parser must agree with shared/tools/score.py's, case by case."""
    path = scorer_path()
    assert path.is_file(), f"scorer not found at {path} (expected beside {cases_dir_path()})"
    spec = importlib.util.spec_from_file_location("_gw_score", path)
    assert spec and spec.loader
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)  # type: ignore[union-attr]
    for case in all_cases:
        theirs = score.read_header(case.path)
        assert theirs.get("expect"), case
        assert theirs["expect"].split()[0] == case.expect, case
        assert theirs["lines"] == set(case.cause_lines), case
        assert theirs["neutral"] == set(case.neutral_lines), case
        assert theirs.get("family", "?")[:1] == case.family, case
    their_files = sorted(
        p for p in cases_dir_path().rglob("*.py") if score.read_header(p).get("expect")
    )
    assert their_files == [c.path for c in all_cases]
