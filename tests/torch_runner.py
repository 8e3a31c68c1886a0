"""The one way the tests run programs under torch: parallel, torch imported once, proofs recorded.

Every test that runs a labelled program or a snippet under torch goes through here
(case labels, the revealed batches, the variants, the bundled examples, the rules' examples,
fix-by-execution, the random-program generator). The pytest process itself never imports torch.

How a program runs
    ``warm`` (default on POSIX): one server process (``torch_runner_child.py``) imports torch once
    and forks one child per program, ``workers()`` children at a time (one per core, at most 8),
    each killed after its timeout. A ``script`` job runs the file as ``python FILE.py`` would;
    a ``dump`` job is the fix-by-execution protocol (see the child module).
    ``fresh``: ``sys.executable FILE.py`` in a new process, the reference way.
    ``GRADWARDEN_CASE_RUN=fresh`` makes every script job fresh and ignores recorded proofs.

Judged runs (:func:`prove`)
    A caller passes a ``judge`` (does this outcome match the label?). A warm outcome that the
    judge rejects is re-run fresh and judged on that run alone, so the warm mode can save time
    but never decide a failure.

Recorded proofs (``tests/data/proofs.json``, kept in the repository so that a fresh clone
reuses them)
    Per suite (``case-labels``, ``variants``, ...), the summary of the outcome of every program,
    keyed by ``kind:sha256(file content)``; each suite's section names the environment it was
    recorded in: torch version, Python ``major.minor`` and the runner (hash of
    ``torch_runner_child.py`` plus :data:`SUMMARY_VERSION`). A recorded outcome is reused only
    when the file content, the environment and the runner are the same *and* the judge accepts
    it; anything else (a new or changed file, another torch, a changed runner, a recorded
    outcome that contradicts the label) runs again. What runs is recorded.

    Pruning: a suite that ran (or reused) its whole selection rewrites its section with
    exactly those programs; entries of files that are gone or changed, and sections of another
    environment, disappear then. A run of a subset (``-k``) only adds.
    A test run never writes the repository's file (no tracked file changes): what it ran and
    did not find recorded runs again next time, until ``update`` records it.
    ``GRADWARDEN_PROOFS=on`` writes it too, ``=off`` neither reads nor writes it, ``=refresh``
    ignores it and rewrites it. ``python tests/torch_runner.py update [--fresh]`` runs every proof test with
    the file in write mode (``--fresh`` re-runs everything), ``python tests/torch_runner.py
    show`` prints what is recorded.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
CHILD = HERE / "torch_runner_child.py"
PROOFS_FILE = HERE / "data" / "proofs.json"
TRACKED_PROOFS_FILE = PROOFS_FILE  # the repository's file: written only on request (Proofs)
MODE_ENV = "GRADWARDEN_CASE_RUN"  # "fresh": no warm server, no recorded proof
PROOFS_ENV = "GRADWARDEN_PROOFS"  # "off" | "refresh" | default (read and write)
# Bumped when what a summary holds or how it is computed changes (part of the runner's id).
SUMMARY_VERSION = 2
DEFAULT_TIMEOUT = 120
# The warm server imports torch before forking; the runner's own tests turn it off for programs
# that do not use torch (what they test is the bookkeeping, not torch).
PRELOAD_TORCH = True
TAIL = 1500

# The proof tests, for `update` (node ids relative to the repository root).
PROOF_TESTS = (
    "tests/test_case_labels.py::test_case_label",
    "tests/test_variants.py::test_variant_labels",
    "tests/test_projects.py::test_project_labels_hold_under_torch",
    "tests/test_examples.py::test_example_behaves_as_labelled",
    "tests/test_rule_examples_run.py",
    "tests/test_fix_cases.py",
    "tests/test_fix_oracle.py",
    "tests/test_fix_lifetime.py",
    "tests/test_progen.py",
)


def workers() -> int:
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        n = os.cpu_count() or 2
    return max(1, min(n, 8))


def run_mode() -> str:
    mode = os.environ.get(MODE_ENV, "warm").strip().lower()
    if mode != "fresh" and not hasattr(os, "fork"):
        return "fresh"
    return "fresh" if mode == "fresh" else "warm"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:24]


# --- outcomes -------------------------------------------------------------------------------

_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_WARN = re.compile(r"^(.*?):(\d+): (\w*Warning): (.*)$")
_SITE = re.compile(r"[\\/](site|dist)-packages[\\/]")  # an installed library, not the program's


def summarize(path: Path, rc: Optional[int], stdout: str, stderr: str) -> dict:
    """What a proof needs of one run of ``path``, independent of where the file lies:

    ``rc`` (None: timed out); ``runtime_error`` (``RuntimeError`` anywhere in stderr);
    ``mismatch`` / ``mismatch_err`` (``MISMATCH`` in stdout / stderr); ``exc`` (the uncaught
    exception's line, ``Type: first line of message``, or ""); ``frames`` (line numbers of the
    last traceback's frames that lie in the program, outermost first); ``warnings``
    (``[line or 0, category, first line of message]`` for each warning printed, line 0 when not
    attributed to the program); ``where``, only when there are any: the last traceback's frames
    in *other* files below the program's folder (``relative/path.py:LINE``, outermost first: the
    modules of a multi-file project run through a launcher, see ``tests/test_projects.py``). A
    single-file program has none, so its summary is what it was before ``where`` existed; ``out``
    (a digest of stdout: the fix oracle compares what a program prints before and after a fix).
    """
    me = os.path.realpath(path)
    base = os.path.dirname(me) + os.sep
    lines = stderr.splitlines()
    frames: List[int] = []
    elsewhere: List[str] = []  # summary key "where"
    exc = ""
    last_tb = max((i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)")),
                  default=None)
    if last_tb is not None and rc not in (0, None):
        for j in range(last_tb + 1, len(lines)):
            m = _FRAME.match(lines[j])
            if m:
                frame_path = os.path.realpath(m.group(1))
                if frame_path == me:
                    frames.append(int(m.group(2)))
                elif frame_path.startswith(base) and not _SITE.search(frame_path):
                    elsewhere.append(os.path.relpath(frame_path, base).replace(os.sep, "/") + ":" + m.group(2))
                continue
            if not lines[j].startswith(" ") and lines[j].strip():
                exc = lines[j].strip()
                break
    elif rc not in (0, None):
        tail = [ln for ln in lines if ln.strip()]
        exc = tail[-1].strip() if tail else ""
    warns = []
    for ln in lines:
        m = _WARN.match(ln)
        if m:
            where = int(m.group(2)) if os.path.realpath(m.group(1)) == me else 0
            warns.append([where, m.group(3), m.group(4)[:120]])
    out = {
        "rc": rc,
        "runtime_error": "RuntimeError" in stderr,
        "mismatch": "MISMATCH" in stdout,
        "mismatch_err": "MISMATCH" in stderr,
        "exc": exc[:160],  # enough for every class of progen.oracle; keeps the file small
        "frames": frames,
        "warnings": warns[:20],
        "out": digest(stdout.encode("utf-8", "replace")),
    }
    if elsewhere:
        out["where"] = elsewhere[-20:]  # the innermost ones: where it raised
    return out


def exc_type(summary: dict) -> str:
    """The uncaught exception's class name (``""`` when the program exited 0)."""
    exc = summary.get("exc") or ""
    head = exc.split(":", 1)[0].strip()
    return head.rsplit(".", 1)[-1] if head else ("" if summary.get("rc") == 0 else "?")


@dataclass
class Outcome:
    """One program's run: ``summary`` always; full stdout/stderr only when it ran in this session."""

    summary: dict
    mode: str  # recorded | warm | fresh
    seconds: float = 0.0
    stdout: str = ""
    stderr: str = ""
    status: Optional[dict] = None  # dump jobs: the child's status file

    @property
    def rc(self) -> Optional[int]:
        return self.summary.get("rc")

    def describe(self) -> str:
        rc = "timed out" if self.rc is None else f"exit code {self.rc}"
        if self.mode == "recorded":
            return f"{rc} (recorded proof): {self.summary.get('exc') or 'no exception'}"
        return (f"{rc} after {self.seconds:.1f}s ({self.mode} run)\n--- stdout (tail) ---\n"
                f"{self.stdout[-TAIL:]}\n--- stderr (tail) ---\n{self.stderr[-TAIL:]}")


@dataclass
class Job:
    id: str
    path: Path
    kind: str = "script"  # script | dump
    timeout: float = DEFAULT_TIMEOUT

    def __post_init__(self) -> None:
        self.path = Path(self.path).resolve()


def run_fresh(job: Job, cwd: Optional[Path] = None) -> Outcome:
    """The reference way: ``sys.executable FILE.py`` in a new process (script jobs only)."""
    start = time.monotonic()
    with contextlib.ExitStack() as stack:
        if cwd is None:
            cwd = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gw-run-")))
        try:
            proc = subprocess.run([sys.executable, str(job.path)], cwd=str(cwd), stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, errors="replace", timeout=job.timeout)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as exc:
            def _s(x):
                return x.decode("utf-8", "replace") if isinstance(x, bytes) else (x or "")

            rc, out, err = None, _s(exc.stdout), _s(exc.stderr)
    return Outcome(summarize(job.path, rc, out, err), "fresh", time.monotonic() - start, out, err)


class WarmServer:
    """One ``torch_runner_child.py`` process for a batch of jobs; results arrive as futures.
    ``stream=True``: more jobs can be added with :meth:`submit` until :meth:`finish`."""

    def __init__(self, jobs: Sequence[Job], workdir: Path, pairs: Sequence[Tuple[str, str]] = (),
                 n_workers: Optional[int] = None, stream: bool = False):
        self.jobs = list(jobs)
        self.outdir = Path(tempfile.mkdtemp(prefix="warm-", dir=str(workdir)))
        self.futures: Dict[str, "Future[Outcome]"] = {j.id: Future() for j in self.jobs}
        self.compared: Dict[Tuple[str, str], "Future[dict]"] = {tuple(p): Future() for p in pairs}
        self._lock = threading.Lock()
        index = {j.id: i for i, j in enumerate(self.jobs)}
        n_workers = n_workers or workers()
        spec = {
            "jobs": [self._job_spec(i, j) for i, j in enumerate(self.jobs)],
            "pairs": [[index[a], index[b]] for a, b in pairs],
            "workers": n_workers,
            "outdir": str(self.outdir),
            # The lazy imports of a first optimizer step cost seconds: worth paying once in the
            # server only when more than one round of children would each pay them.
            "warm_up": stream or len(self.jobs) > n_workers,
            "torch": PRELOAD_TORCH,
            "stream": stream,
        }
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
        self._log = open(self.outdir / "server.err", "w")
        self.proc = subprocess.Popen([sys.executable, str(CHILD)], cwd=str(self.outdir), env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()
        if not stream:
            self.proc.stdin.close()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @staticmethod
    def _job_spec(i: int, j: Job) -> dict:
        return {"i": i, "kind": j.kind, "path": str(j.path), "timeout": j.timeout}

    def submit(self, job: Job) -> "Future[Outcome]":
        """One more job (``stream=True`` servers only)."""
        assert self.proc.stdin is not None and not self.proc.stdin.closed, "not a streaming server"
        with self._lock:
            i = len(self.jobs)
            self.jobs.append(job)
            fut: "Future[Outcome]" = Future()
            self.futures[job.id] = fut
            self.proc.stdin.write(json.dumps(self._job_spec(i, job)) + "\n")
            self.proc.stdin.flush()
        return fut

    def finish(self) -> None:
        """No more jobs: the server exits when the running ones are done."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()

    def _outcome(self, i: int, msg: dict) -> Outcome:
        job = self.jobs[i]
        out = (self.outdir / f"{i}.out").read_text("utf-8", "replace") if (self.outdir / f"{i}.out").exists() else ""
        err = (self.outdir / f"{i}.err").read_text("utf-8", "replace") if (self.outdir / f"{i}.err").exists() else ""
        rc = None if msg.get("timed_out") else msg["rc"]
        status = None
        if job.kind == "dump":
            try:
                status = json.loads((self.outdir / f"{i}.json").read_text())
            except (OSError, ValueError):
                status = {"status": "crash", "error": "the child died", "mismatch": False}
            if rc is None:
                status = {"status": "timeout", "error": "timed out", "mismatch": False}
        return Outcome(summarize(job.path, rc, out, err), "warm", float(msg.get("seconds", 0.0)), out, err, status)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if "pair" in msg:
                    a, b = (self.jobs[x].id for x in msg["pair"])
                    fut = self.compared.get((a, b))
                    if fut is not None and not fut.done():
                        fut.set_result(msg["compare"])
                    continue
                i = msg.get("i")
                with self._lock:
                    if not isinstance(i, int) or not 0 <= i < len(self.jobs):
                        continue
                    fut = self.futures[self.jobs[i].id]
                if not fut.done():
                    try:
                        fut.set_result(self._outcome(i, msg))
                    except BaseException as exc:  # noqa: BLE001 - surfaces in the waiting test
                        fut.set_exception(exc)
        finally:
            self.proc.wait()
            self._log.close()
            log = (self.outdir / "server.err").read_text("utf-8", "replace")[-3000:]
            for fut in list(self.futures.values()) + list(self.compared.values()):
                if not fut.done():
                    fut.set_exception(RuntimeError(f"the torch runner exited ({self.proc.returncode}) "
                                                   f"before this job finished:\n{log}"))

    def close(self) -> None:
        self.finish()
        if self.proc.poll() is None:
            self.proc.kill()


# --- recorded proofs ------------------------------------------------------------------------


def _torch_version() -> str:
    try:
        from importlib.metadata import version

        return version("torch")
    except Exception:  # noqa: BLE001 - no torch: nothing recorded can match
        return "none"


def environment() -> str:
    runner = digest(CHILD.read_bytes() + f"summary {SUMMARY_VERSION}".encode())[:12]
    return f"torch {_torch_version()}, python {sys.version_info[0]}.{sys.version_info[1]}, runner {runner}"


@contextlib.contextmanager
def _locked(path: Path):
    """One writer of ``path`` at a time (pytest-xdist workers, parallel sessions): a lock on the
    folder that holds it, which leaves no lock file behind (a file beside it would be an
    untracked file in the checkout, one in the temporary folder a trace of every run)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no other session to race with in practice
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(str(path.parent), os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _read_file(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and isinstance(data.get("suites"), dict) else {}


def _write_file(path: Path, data: dict) -> None:
    """One entry a line, keys sorted: a re-run that changes one proof changes one line."""
    rows = ["{", f'  "about": {json.dumps(data["about"])},', '  "suites": {']
    suites = sorted(data["suites"].items())
    for si, (name, sec) in enumerate(suites):
        rows.append(f"    {json.dumps(name)}: {{")
        rows.append(f'      "env": {json.dumps(sec["env"])},')
        rows.append('      "proofs": {')
        items = sorted(sec["proofs"].items())
        for k, (key, val) in enumerate(items):
            comma = "," if k < len(items) - 1 else ""
            rows.append(f"        {json.dumps(key)}: {json.dumps(val, sort_keys=True, separators=(',', ':'))}{comma}")
        rows.append("      }")
        rows.append("    }" + ("," if si < len(suites) - 1 else ""))
    rows.append("  }")
    rows.append("}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".proofs-", dir=str(path.parent))
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write("\n".join(rows) + "\n")
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


ABOUT = ("Recorded outcomes of programs run under torch by the tests (tests/torch_runner.py): "
         "reused when the file content, torch, Python and the runner are unchanged; "
         "`python tests/torch_runner.py update` rewrites it.")


class Proofs:
    """The recorded outcomes of one suite (a section of ``tests/data/proofs.json``).

    The repository's own file is only read by a test run (a test must not change a tracked
    file): it is written by ``python tests/torch_runner.py update`` (``GRADWARDEN_PROOFS=on``
    or ``refresh``). A file elsewhere (a test's own, under its temporary folder) is written
    unless ``GRADWARDEN_PROOFS=off``."""

    def __init__(self, suite: str, path: Optional[Path] = None):
        self.suite = suite
        self.path = path or PROOFS_FILE
        self.env = environment()
        setting = os.environ.get(PROOFS_ENV, "").strip().lower()
        self.read_enabled = setting not in ("off", "refresh") and run_mode() != "fresh"
        tracked = self.path.resolve() == TRACKED_PROOFS_FILE.resolve()
        self.write_enabled = setting in ("on", "refresh") or (setting != "off" and not tracked)
        self._lock = threading.Lock()
        self._known: Dict[str, dict] = {}
        self._new: Dict[str, dict] = {}
        self._used: Dict[str, dict] = {}
        if self.read_enabled:
            sec = _read_file(self.path).get("suites", {}).get(suite)
            if isinstance(sec, dict) and sec.get("env") == self.env and isinstance(sec.get("proofs"), dict):
                self._known = dict(sec["proofs"])

    @staticmethod
    def key(kind: str, *contents: bytes) -> str:
        return ":".join([kind] + [digest(c) for c in contents])

    def lookup(self, key: str) -> Optional[dict]:
        return self._known.get(key) if self.read_enabled else None

    def use(self, key: str, summary: dict) -> None:
        """A proof this session relied on (reused or not): kept at the next complete save."""
        with self._lock:
            self._used[key] = summary

    def record(self, key: str, summary: dict, name: str = "") -> None:
        """``name``: which program it was, for a reader of the file (not part of the key)."""
        if name:
            summary = {**summary, "name": name}
        with self._lock:
            self._used[key] = summary
            self._new[key] = summary

    @property
    def counts(self) -> Tuple[int, int]:
        """(reused, newly recorded) in this session."""
        return len(self._used) - len(self._new), len(self._new)

    def save(self, complete: bool) -> None:
        """Write what ran. ``complete``: the suite's whole selection was used in this session, so
        its section becomes exactly that (stale entries are pruned)."""
        if not self.write_enabled:
            return
        with self._lock, _locked(self.path):
            data = _read_file(self.path) or {"suites": {}}
            data["about"] = ABOUT
            sec = data["suites"].get(self.suite)
            if not isinstance(sec, dict) or sec.get("env") != self.env or not isinstance(sec.get("proofs"), dict):
                sec = {"env": self.env, "proofs": {}}
            proofs = dict(self._used) if complete else {**sec["proofs"], **self._new}
            if proofs == sec["proofs"] and data["suites"].get(self.suite) == sec:
                return  # nothing changed: leave the file alone
            data["suites"][self.suite] = {"env": self.env, "proofs": proofs}
            _write_file(self.path, data)


# --- judged runs ----------------------------------------------------------------------------

Judge = Callable[[Outcome], bool]


class Prover:
    """Runs a batch of script jobs to outcomes that a judge accepts or that a fresh run decided.

    ``results()[job.id]`` is a future of the deciding :class:`Outcome`: the recorded proof when
    the judge accepts it; else the warm run when the judge accepts it; else a fresh run.
    Everything that ran is recorded in ``proofs``.
    """

    def __init__(self, jobs: Sequence[Job], judges: Dict[str, Judge], proofs: Optional[Proofs], workdir: Path):
        self.jobs = list(jobs)
        self.proofs = proofs
        self.judges = judges
        self.workdir = workdir
        self.mode = run_mode()
        self.reruns: List[str] = []
        self.ran: List[str] = []
        self.started = time.monotonic()
        self.futures: Dict[str, "Future[Outcome]"] = {}
        self._pool = ThreadPoolExecutor(max_workers=workers(), thread_name_prefix="prove")
        self._server: Optional[WarmServer] = None
        self._keys: Dict[str, str] = {}
        to_run: List[Job] = []
        for job in self.jobs:
            key = Proofs.key(job.kind, job.path.read_bytes())
            self._keys[job.id] = key
            fut: "Future[Outcome]" = Future()
            self.futures[job.id] = fut
            known = proofs.lookup(key) if proofs is not None else None
            if known is not None:
                outcome = Outcome(known, "recorded")
                if self._accepts(job, outcome):
                    proofs.use(key, known)  # type: ignore[union-attr]
                    fut.set_result(outcome)
                    continue
            to_run.append(job)
        self.ran = [j.id for j in to_run]
        if not to_run:
            return
        to_run.sort(key=lambda j: -j.path.stat().st_size)  # big files first: cores busy to the end
        if self.mode == "fresh":
            for job in to_run:
                self._pool.submit(self._fresh_into, job)
            return
        self._server = WarmServer(to_run, workdir)
        for job in to_run:
            self._server.futures[job.id].add_done_callback(lambda f, job=job: self._warm_done(job, f))

    def _accepts(self, job: Job, outcome: Outcome) -> bool:
        judge = self.judges.get(job.id)
        return judge is None or bool(judge(outcome))

    def _finish(self, job: Job, outcome: Outcome) -> None:
        if self.proofs is not None and outcome.rc is not None:  # a time-out is no proof
            self.proofs.record(self._keys[job.id], outcome.summary, job.id)
        self.futures[job.id].set_result(outcome)

    def _fresh_into(self, job: Job) -> None:
        try:
            self._finish(job, run_fresh(job))
        except BaseException as exc:  # noqa: BLE001 - surfaces in the waiting test
            self.futures[job.id].set_exception(exc)

    def _warm_done(self, job: Job, fut: "Future[Outcome]") -> None:
        exc = fut.exception()
        if exc is None and self._accepts(job, fut.result()):
            self._finish(job, fut.result())
            return
        self.reruns.append(job.id)  # the reference run decides
        self._pool.submit(self._fresh_into, job)

    def result(self, job_id: str, timeout: Optional[float] = None) -> Outcome:
        return self.futures[job_id].result(timeout=timeout)

    def wait_all(self) -> Dict[str, Outcome]:
        return {jid: fut.result() for jid, fut in self.futures.items()}

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def summary_line(self, what: str) -> str:
        total = time.monotonic() - self.started
        reused = len(self.jobs) - len(self.ran)
        note = f"; re-run fresh: {', '.join(self.reruns)}" if self.reruns else ""
        return (f"[{what}] {len(self.jobs)} programs: {reused} recorded proofs reused, {len(self.ran)} run "
                f"({self.mode} mode, {workers()} workers) in {total:.1f}s{note}")


def prove(jobs: Sequence[Job], judge: Optional[Judge], suite: Optional[str], workdir: Path,
          judges: Optional[Dict[str, Judge]] = None, complete: bool = True,
          proofs_path: Optional[Path] = None) -> Tuple[Dict[str, Outcome], Prover]:
    """Run ``jobs`` to deciding outcomes (blocking) and save the suite's proofs (in
    ``proofs_path``, default ``tests/data/proofs.json``)."""
    proofs = Proofs(suite, proofs_path) if suite else None
    all_judges = {j.id: judge for j in jobs if judge is not None}
    all_judges.update(judges or {})
    prover = Prover(jobs, all_judges, proofs, workdir)
    try:
        results = prover.wait_all()
    finally:
        prover.close()
    if proofs is not None:
        proofs.save(complete=complete)
    return results, prover


def run_warm(jobs: Sequence[Job], workdir: Path, pairs: Sequence[Tuple[str, str]] = ()
             ) -> Tuple[Dict[str, Outcome], Dict[Tuple[str, str], dict]]:
    """Run jobs (any kind) in one warm server, no judging, no recording; blocking."""
    if not jobs:
        return {}, {}
    server = WarmServer(jobs, workdir, pairs)
    try:
        outcomes = {jid: fut.result() for jid, fut in server.futures.items()}
        compared = {pair: fut.result() for pair, fut in server.compared.items()}
    finally:
        server.close()
    return outcomes, compared


DUMP_STATUS_KEYS = ("status", "error", "mismatch", "n_tensors", "dump_error")


def run_dumps(jobs: Sequence[Job], pairs: Sequence[Tuple[str, str]], suite: Optional[str], workdir: Path,
              complete: bool = True) -> Tuple[Dict[str, dict], Dict[str, dict], "RunCounts"]:
    """Fix-by-execution runs (``dump`` jobs) and gradient comparisons of ``pairs`` (a, b).

    Returns (status per job id, comparison per ``a`` of each pair, counts). A job's status is
    recorded under ``dump:sha(content)``, a comparison under ``compare:sha(a):sha(b)`` (both
    deterministic: the child seeds torch and ``random``); a job runs when its status is not
    recorded or when it is half of a pair whose comparison is not recorded.
    """
    proofs = Proofs(suite) if suite else None
    jobs = [Job(j.id, j.path, "dump", j.timeout) for j in jobs]
    keys = {j.id: Proofs.key("dump", j.path.read_bytes()) for j in jobs}
    by_id = {j.id: j for j in jobs}
    pair_keys = {(a, b): "compare:" + keys[a].split(":", 1)[1] + ":" + keys[b].split(":", 1)[1] for a, b in pairs}
    statuses: Dict[str, dict] = {}
    compared: Dict[str, dict] = {}
    need: set = set()
    for j in jobs:
        known = proofs.lookup(keys[j.id]) if proofs else None
        if known is None:
            need.add(j.id)
        else:
            statuses[j.id] = known
            proofs.use(keys[j.id], known)  # type: ignore[union-attr]
    run_pairs = []
    for (a, b), key in pair_keys.items():
        known = proofs.lookup(key) if proofs else None
        if known is None:
            need.update((a, b))
            run_pairs.append((a, b))
        else:
            compared[a] = known
            proofs.use(key, known)  # type: ignore[union-attr]
    to_run = sorted((by_id[x] for x in need), key=lambda j: -j.path.stat().st_size)
    outcomes, fresh_cmp = run_warm(to_run, workdir, run_pairs)
    for jid, out in outcomes.items():
        status = {k: out.status[k] for k in DUMP_STATUS_KEYS if out.status and k in out.status}
        statuses[jid] = status
        if proofs is not None and status.get("status") != "timeout":
            proofs.record(keys[jid], status, jid)
    for (a, b), result in fresh_cmp.items():
        compared[a] = result
        if proofs is not None:
            proofs.record(pair_keys[(a, b)], result, f"{a} vs {b}")
    if proofs is not None:
        proofs.save(complete=complete)
    return statuses, compared, RunCounts(len(jobs), len(to_run), len(pairs), len(run_pairs))


@dataclass
class RunCounts:
    jobs: int
    ran: int
    pairs: int
    compared: int

    def line(self, what: str) -> str:
        return (f"[{what}] {self.jobs} programs, {self.jobs - self.ran} recorded, {self.ran} run; "
                f"{self.pairs} comparisons, {self.pairs - self.compared} recorded, {self.compared} run")


def write_snippets(snippets: Iterable[Tuple[str, str]], folder: Path) -> Dict[str, Path]:
    """``(id, source)`` pairs as files named by content (so that equal snippets share a proof)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for sid, text in snippets:
        p = folder / f"snippet_{digest(text.encode())[:16]}.py"
        if not p.exists():
            p.write_text(text, encoding="utf-8")
        out[sid] = p
    return out


# --- command line -----------------------------------------------------------------------------


def _show() -> int:
    data = _read_file(PROOFS_FILE)  # noqa: F821 - module global, read at call time
    env = environment()
    print(f"{PROOFS_FILE}: current environment: {env}")
    for name, sec in sorted(data.get("suites", {}).items()):
        mark = "current" if sec.get("env") == env else "STALE (another environment: re-run to replace)"
        print(f"  {name:<16} {len(sec.get('proofs', {})):>5} proofs  {sec.get('env')}  [{mark}]")
    return 0


def main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python tests/torch_runner.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("update", help="run every proof test and rewrite tests/data/proofs.json "
                                       "(complete runs prune stale entries)")
    up.add_argument("--fresh", action="store_true", help="ignore every recorded proof, re-run all")
    up.add_argument("pytest_args", nargs="*", help="extra pytest arguments")
    sub.add_parser("show", help="what is recorded, per suite")
    args = parser.parse_args(argv)
    if args.cmd == "show":
        return _show()
    env = dict(os.environ)
    env[PROOFS_ENV] = "refresh" if args.fresh else "on"
    env["GRADWARDEN_TRACE_GUARD"] = "off"  # rewriting the tracked proofs file is this command's job
    root = HERE.parent
    cmd = [sys.executable, "-m", "pytest", "-q", *PROOF_TESTS, *args.pytest_args]
    print("+", " ".join(cmd), flush=True)
    return subprocess.call(cmd, cwd=str(root), env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
