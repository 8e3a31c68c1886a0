"""DebugSession: one instrumented run of the user's code in a child process (parent side).

Never imports torch. The child (``_child.py``) runs under the target interpreter; this side
builds its command line (plain, torchrun, or a user's launcher template), starts it in its own
process group, follows its event files for progress, enforces the timeout, kills the whole
process tree on cancellation, and finally confronts what the run saw with the static engine.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Set, Tuple

from gradwarden.runtime.findings import (
    CONFIRMED,
    NOT_REACHED,
    NOT_REPRODUCED,
    RUNTIME_ONLY,
    Finding,
    RunEvents,
    classify,
)

CHILD_PATH = Path(__file__).resolve().with_name("_child.py")

# exit codes of the child itself (see _child.py)
EXIT_TORCH_MISSING = 3
EXIT_BAD_CONFIG = 4
EXIT_NO_CUDA = 5

DEVICES = ("auto", "cpu", "cuda")
LAUNCHERS = ("none", "torchrun")
OUTPUTS = ("inherit", "log", "discard", "stderr")
STDINS = ("devnull", "inherit")

# How a run ended
STATUS_OK = "ok"  # the target finished with exit status 0
STATUS_FAILED = "failed"  # it ended with an uncaught exception or a non-zero status
STATUS_STOPPED = "stopped"  # --max-steps reached
STATUS_TIMEOUT = "timeout"
STATUS_CANCELLED = "cancelled"
STATUS_CRASHED = "crashed"  # killed by a signal (segfault, abort, OOM killer ...)
STATUS_ERROR = "error"  # the bridge could not run the target (no interpreter, no torch, ...)


class DebugError(Exception):
    """The debug run cannot start (bad options, missing interpreter or target)."""


@dataclass(frozen=True)
class Target:
    """What to run: a script (``python script.py args``), a module (``python -m mod args``)
    or a pytest test id (``pytest TEST_ID args``)."""

    kind: str  # script | module | pytest
    value: str
    args: Tuple[str, ...] = ()
    cwd: Optional[str] = None  # working directory of the run (default: the current one)

    @classmethod
    def script(cls, path: str, args: Sequence[str] = (), cwd: Optional[str] = None) -> "Target":
        return cls("script", str(path), tuple(args), cwd)

    @classmethod
    def module(cls, name: str, args: Sequence[str] = (), cwd: Optional[str] = None) -> "Target":
        return cls("module", name, tuple(args), cwd)

    @classmethod
    def pytest(cls, test_id: str, args: Sequence[str] = (), cwd: Optional[str] = None) -> "Target":
        return cls("pytest", test_id, tuple(args), cwd)

    def describe(self) -> str:
        if self.kind == "module":
            return f"-m {self.value}"
        if self.kind == "pytest":
            return f"pytest {self.value}"
        return self.value


@dataclass
class DebugOptions:
    python: Optional[str] = None  # the target interpreter (default: this one)
    device: str = "auto"  # auto | cpu | cuda
    default_device: bool = False  # make the chosen CUDA device torch's default device
    max_steps: Optional[int] = None  # stop when the program asks for backward call N+1
    timeout: Optional[float] = None  # seconds
    launcher: str = "none"  # none | torchrun
    nproc_per_node: int = 1
    launcher_template: Optional[str] = None  # e.g. "srun --gres=gpu:1 {cmd}" ({qcmd}: quoted once more)
    output: str = "inherit"  # inherit | log | discard | stderr (the user's stdout to our stderr)
    # devnull (default: a language server's stdin is its protocol) | inherit (the CLI: `cat x | gradwarden
    # debug s.py` feeds the script). Runs forked from a Zygote always read /dev/null.
    stdin: str = "devnull"
    log_path: Optional[str] = None  # output == "log": where the user's stdout/stderr go
    results_dir: Optional[str] = None  # where the child writes its events (kept when given)
    static: bool = True  # run the static engine on the executed files and classify
    coverage: bool = True
    env: Dict[str, str] = field(default_factory=dict)
    grace: float = 2.0  # seconds between SIGTERM and SIGKILL when stopping the run
    poll_interval: float = 0.1

    def check(self) -> None:
        if self.device not in DEVICES:
            raise DebugError(f"--device must be one of {', '.join(DEVICES)}, not {self.device!r}")
        if self.launcher not in LAUNCHERS:
            raise DebugError(f"--launcher must be one of {', '.join(LAUNCHERS)}, not {self.launcher!r}")
        if self.stdin not in STDINS:
            raise DebugError(f"stdin must be one of {', '.join(STDINS)}, not {self.stdin!r}")
        if self.output not in OUTPUTS:
            raise DebugError(f"output must be one of {', '.join(OUTPUTS)}, not {self.output!r}")
        if self.max_steps is not None and self.max_steps < 0:
            raise DebugError("--max-steps cannot be negative")
        if self.timeout is not None and self.timeout <= 0:
            raise DebugError("--timeout must be positive")
        if self.nproc_per_node < 1:
            raise DebugError("--nproc-per-node must be at least 1")
        if self.launcher_template is not None and "{cmd}" not in self.launcher_template \
                and "{qcmd}" not in self.launcher_template:
            raise DebugError("--launcher-template must contain {cmd} (or {qcmd})")
        if self.output == "log" and not self.log_path:
            raise DebugError("output 'log' needs a log_path")


@dataclass(frozen=True)
class Progress:
    """A progress report (``on_progress``)."""

    stage: str  # starting | running | backward | finding | analyzing | done
    message: str
    backward_calls: int = 0
    elapsed: float = 0.0
    finding: Optional[Finding] = None


@dataclass
class DebugResult:
    status: str
    message: str  # one line: how the run ended
    findings: List[Finding] = field(default_factory=list)  # classified static + runtime-only
    runtime_findings: List[Finding] = field(default_factory=list)  # what the run saw (merged over ranks)
    exit_code: Optional[int] = None  # the target's exit status (None: killed or never started)
    signal: Optional[str] = None
    error: Optional[str] = None  # why the bridge could not run the target
    exception: Optional[str] = None  # the target's uncaught exception, one line
    device: str = ""
    torch_version: str = ""
    python_version: str = ""
    backward_calls: int = 0
    ranks: Tuple[str, ...] = ()
    duration: float = 0.0
    log_path: Optional[str] = None
    results_dir: Optional[str] = None
    crash: Optional[str] = None  # faulthandler's report when the target crashed
    files: Tuple[str, ...] = ()  # the user's files that ran
    coverage: Dict[str, Set[int]] = field(default_factory=dict)
    static_error: Optional[str] = None
    # what the run showed that only confirms a static diagnostic (a hook slot overwritten within
    # a step, GW721): never a finding of its own
    premises: List[Finding] = field(default_factory=list)

    @property
    def counts(self) -> Dict[str, int]:
        out = {s: 0 for s in (CONFIRMED, NOT_REPRODUCED, NOT_REACHED, RUNTIME_ONLY)}
        for f in self.findings:
            out[f.status] = out.get(f.status, 0) + 1
        return out

    def to_json(self) -> Dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "error": self.error,
            "exception": self.exception,
            "device": self.device,
            "torch": self.torch_version,
            "python": self.python_version,
            "backward_calls": self.backward_calls,
            "ranks": list(self.ranks),
            "duration": round(self.duration, 3),
            "log": self.log_path,
            "counts": self.counts,
            "findings": [f.to_json() for f in self.findings],
        }


ProgressCallback = Callable[[Progress], None]
DoneCallback = Callable[[DebugResult], None]


# --------------------------------------------------------------------------- commands
def child_config(target: Target, options: DebugOptions, out_dir: str) -> Dict[str, Any]:
    cfg: Dict[str, Any] = {
        "out": out_dir,
        "mode": target.kind,
        "target": os.path.abspath(target.value) if target.kind == "script" else target.value,
        "device": options.device,
        "default_device": bool(options.default_device),
        "max_steps": options.max_steps,
        "coverage": bool(options.coverage),
    }
    if target.cwd:
        cfg["cwd"] = os.path.abspath(target.cwd)
    return cfg


def encode_config(config: Mapping[str, Any]) -> str:
    import base64
    import json

    raw = json.dumps(config, separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def resolve_python(python: Optional[str]) -> str:
    """The interpreter to run, as an absolute path (raises DebugError when there is none)."""
    if not python:
        return sys.executable
    candidate = os.path.expanduser(python)
    if os.sep in candidate or (os.altsep and os.altsep in candidate):
        path = os.path.abspath(candidate)
        if not os.path.exists(path):
            raise DebugError(f"interpreter not found: {python}")
        if os.path.isdir(path) or not os.access(path, os.X_OK):
            raise DebugError(f"interpreter is not executable: {python}")
        return path
    found = shutil.which(candidate)
    if found is None:
        raise DebugError(f"interpreter not found on PATH: {python}")
    return found


def build_command(target: Target, options: DebugOptions, out_dir: str, python: str) -> List[str]:
    """The argv of the run (for a launcher template: ``/bin/sh -c <template>``)."""
    config = encode_config(child_config(target, options, out_dir))
    child = [str(CHILD_PATH), "--gw-config", config, "--", *target.args]
    if options.launcher == "torchrun":
        # torchrun's own logs go with the run's results (left to it, they are a `torchelastic_*`
        # folder in the temporary directory that nothing removes)
        argv = [python, "-m", "torch.distributed.run", "--standalone",
                "--nproc-per-node", str(options.nproc_per_node),
                "--log-dir", os.path.join(out_dir, "torchrun-logs"), *child]
    else:
        argv = [python, *child]
    if options.launcher_template:
        cmd = shlex.join(argv)
        text = options.launcher_template.replace("{qcmd}", shlex.quote(cmd)).replace("{cmd}", cmd)
        return ["/bin/sh", "-c", text]
    return argv


def run_environment(options: DebugOptions, base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ if base is None else base)
    env.update(options.env)
    if options.device in ("auto", "cuda"):
        env["CUDA_LAUNCH_BLOCKING"] = "1"
    if options.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""
    if options.output in ("log", "discard", "stderr"):
        env.setdefault("PYTHONUNBUFFERED", "1")
    if options.launcher == "torchrun":
        env.setdefault("OMP_NUM_THREADS", env.get("OMP_NUM_THREADS", "1"))
    return env


# --------------------------------------------------------------------------- processes
def _proc_table() -> Optional[Dict[int, Tuple[int, int]]]:
    """pid -> (ppid, pgid) of every process (Linux /proc, else ``ps``); None if unknown."""
    table: Dict[int, Tuple[int, int]] = {}
    if os.path.isdir("/proc"):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat", "rb") as fh:
                    data = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            rest = data[data.rfind(")") + 2:].split()
            try:
                if rest[0] == "Z":
                    continue  # zombies are dead already
                table[int(name)] = (int(rest[1]), int(rest[2]))
            except (IndexError, ValueError):
                continue
        return table
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,pgid=,stat="], capture_output=True, text=True,
                             timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 4 and not parts[3].startswith("Z"):
            try:
                table[int(parts[0])] = (int(parts[1]), int(parts[2]))
            except ValueError:
                continue
    return table


def process_tree(root: int, pgid: Optional[int] = None) -> Set[int]:
    """``root``, its descendants, and every process of group ``pgid`` (alive, not zombies)."""
    table = _proc_table()
    if table is None:
        return {root}
    children: Dict[int, List[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    out: Set[int] = set()
    stack = [root] if root in table else []
    if pgid is not None:
        stack += [pid for pid, (_, g) in table.items() if g == pgid]
    while stack:
        pid = stack.pop()
        if pid in out:
            continue
        out.add(pid)
        stack.extend(children.get(pid, ()))
    out.discard(os.getpid())
    return out


def _signal_all(pids: Set[int], pgid: Optional[int], sig: int) -> None:
    if pgid is not None:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError, OSError):
            pass


def kill_tree(proc: "subprocess.Popen[bytes]", pgid: Optional[int], grace: float) -> None:
    """SIGTERM the whole tree (group + descendants), then SIGKILL what is left after ``grace``."""
    if os.name == "nt":  # pragma: no cover - not exercised in CI
        subprocess.run(["taskkill", "/T", "/F", "/PID", str(proc.pid)], capture_output=True)
        return
    pids = process_tree(proc.pid, pgid)
    _signal_all(pids, pgid, signal.SIGTERM)
    deadline = time.monotonic() + max(grace, 0.0)
    while time.monotonic() < deadline:
        if proc.poll() is None:
            time.sleep(0.05)
            continue
        left = process_tree(proc.pid, pgid) - {proc.pid}
        if not left:
            break
        time.sleep(0.05)
    pids = process_tree(proc.pid, pgid) | pids
    _signal_all(pids, pgid, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass
    # descendants that were re-parented may take a moment to disappear
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and (process_tree(proc.pid, pgid) - {proc.pid}):
        _signal_all(process_tree(proc.pid, pgid) - {proc.pid}, None, signal.SIGKILL)
        time.sleep(0.05)


# --------------------------------------------------------------------------- zygote
class _ZygoteProc:
    """A run forked by a Zygote, with the part of Popen's interface the session uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: Optional[int] = None
        self._exited = threading.Event()

    def _set_exit(self, code: int) -> None:
        self.returncode = code
        self._exited.set()

    def poll(self) -> Optional[int]:
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if not self._exited.wait(timeout):
            raise subprocess.TimeoutExpired("zygote run", timeout or 0)
        assert self.returncode is not None
        return self.returncode


class Zygote:
    """A warm interpreter that has imported torch and forks one run per session (saves the
    ~2 s of ``import torch`` per run: for the language server's repeated runs and for tests).

    Runs forked from it see the environment and working directory of their request, but torch
    was imported before them (environment variables read at ``import torch`` come from the
    zygote). Not for launchers (torchrun, templates). CPU or not-yet-initialised CUDA only: the
    zygote never runs a torch op. Use as a context manager, or ``start()``/``close()``.
    """

    def __init__(self, python: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
                 start_timeout: float = 120.0) -> None:
        self.python = resolve_python(python)
        self.env = dict(os.environ if env is None else env)
        self.start_timeout = start_timeout
        self.torch_version = ""
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: Dict[int, Any] = {}  # id -> [Event, reply]
        self._procs: Dict[int, _ZygoteProc] = {}
        self._reader: Optional[threading.Thread] = None
        self._closed = False

    def __enter__(self) -> "Zygote":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def start(self) -> "Zygote":
        import json

        kwargs: Dict[str, Any] = {"start_new_session": True} if os.name != "nt" else {}
        self._proc = subprocess.Popen([self.python, str(CHILD_PATH), "--gw-zygote"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, env=self.env, **kwargs)
        assert self._proc.stdout is not None
        first: List[bytes] = []
        reader = threading.Thread(target=lambda: first.append(self._proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        reader.join(self.start_timeout)
        line = first[0] if first else b""
        try:
            hello = json.loads(line.decode("utf-8")) if line.strip() else {}
        except ValueError:
            hello = {}
        if not hello.get("ready"):
            self.close()
            if hello.get("fatal") == "torch-missing":
                raise DebugError(_fatal_message({"reason": "torch-missing", "message": hello.get("message")}))
            raise DebugError(f"the debug zygote did not start ({self.python})")
        self.torch_version = str(hello.get("torch", ""))
        self._reader = threading.Thread(target=self._read, name="gradwarden-zygote", daemon=True)
        self._reader.start()
        return self

    def _read(self) -> None:
        import json

        assert self._proc is not None and self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                msg = json.loads(line.decode("utf-8"))
            except ValueError:
                continue
            rid = msg.get("id")
            with self._lock:
                if "exit" in msg:
                    proc = self._procs.pop(rid, None)
                    if proc is not None:
                        proc._set_exit(int(msg["exit"]))
                    continue
                waiter = self._waiting.pop(rid, None)
            if waiter is not None:
                waiter[1] = msg
                waiter[0].set()
        # the zygote is gone: every run it had is over as far as we can tell
        with self._lock:
            procs = list(self._procs.values())
            self._procs.clear()
            waiting = list(self._waiting.values())
            self._waiting.clear()
        for proc in procs:
            proc._set_exit(-signal.SIGKILL if os.name != "nt" else 1)
        for waiter in waiting:
            waiter[0].set()

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], cwd: Optional[str], stdout: Optional[str],
              stderr: Optional[str]) -> _ZygoteProc:
        import json

        if self._proc is None or self._closed or self._proc.poll() is not None:
            raise DebugError("the debug zygote is not running")
        with self._lock:
            self._next += 1
            rid = self._next
            waiter: List[Any] = [threading.Event(), None]
            self._waiting[rid] = waiter
        req = {"id": rid, "argv": list(argv), "env": dict(env), "cwd": cwd, "stdout": stdout, "stderr": stderr}
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(req) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise DebugError(f"the debug zygote is gone: {exc}") from exc
        if not waiter[0].wait(30) or not waiter[1] or "pid" not in waiter[1]:
            raise DebugError(f"the debug zygote could not start the run: {(waiter[1] or {}).get('error', 'no reply')}")
        proc = _ZygoteProc(int(waiter[1]["pid"]))
        with self._lock:
            self._procs[rid] = proc
        return proc

    def close(self) -> None:
        self._closed = True
        proc = self._proc
        if proc is None:
            return
        try:
            if proc.stdin is not None:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            kill_tree(proc, proc.pid if os.name != "nt" else None, 0.5)
        if proc.stdout is not None:
            try:
                proc.stdout.close()
            except OSError:
                pass


# --------------------------------------------------------------------------- session
class DebugSession:
    """One debug run. Thread-safe; never blocks the caller except in ``wait``.

    ``start()`` launches the child and a monitor thread. Callbacks (``on_progress``,
    ``on_done``) run on the monitor thread, or on ``loop`` (an asyncio loop) when one is given.
    """

    def __init__(
        self,
        target: Target,
        options: Optional[DebugOptions] = None,
        *,
        on_progress: Optional[ProgressCallback] = None,
        on_done: Optional[DoneCallback] = None,
        loop: Any = None,
        zygote: Optional[Zygote] = None,
    ) -> None:
        self.target = target
        self.zygote = zygote
        self.options = options or DebugOptions()
        self._on_progress = on_progress
        self._done_callbacks: List[DoneCallback] = [on_done] if on_done else []
        self._loop = loop
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._cancel = threading.Event()
        self._proc: Optional["subprocess.Popen[bytes]"] = None
        self._pgid: Optional[int] = None
        self._thread: Optional[threading.Thread] = None
        self._result: Optional[DebugResult] = None
        self._events = RunEvents()
        self._offsets: Dict[Path, int] = {}
        self._partial: Dict[Path, bytes] = {}
        self._out_dir: Optional[Path] = None
        self._own_out_dir = False
        self._started_at = 0.0
        self._log_fh: Any = None
        self._timed_out = False

    # ---- public API
    @property
    def pid(self) -> Optional[int]:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and not self._done.is_set()

    @property
    def result(self) -> Optional[DebugResult]:
        return self._result

    def add_done_callback(self, fn: DoneCallback) -> None:
        with self._lock:
            if self._result is None:
                self._done_callbacks.append(fn)
                return
        self._call(fn, self._result)

    def start(self) -> "DebugSession":
        """Start the run (raises DebugError when it cannot start)."""
        with self._lock:
            if self._proc is not None or self._done.is_set():
                raise DebugError("this session was already started")
            self.options.check()
            self._started_at = time.monotonic()
            try:
                argv, env, cwd = self._prepare()
                self._launch(argv, env, cwd)
            except DebugError:
                self._cleanup_dir()
                raise
        self._thread = threading.Thread(target=self._monitor, name="gradwarden-debug", daemon=True)
        self._thread.start()
        return self

    def cancel(self) -> None:
        """Stop the run: the whole process tree is terminated (then killed)."""
        self._cancel.set()

    def wait(self, timeout: Optional[float] = None) -> Optional[DebugResult]:
        """Block until the run is over (None if ``timeout`` passed first)."""
        if not self._done.wait(timeout):
            return None
        return self._result

    async def wait_async(self) -> DebugResult:
        """Await the result without blocking the event loop. Cancelling the awaiting task does
        not stop the run: call ``cancel()`` for that."""
        import asyncio

        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def done(result: DebugResult) -> None:
            def settle() -> None:
                if not future.done():
                    future.set_result(result)

            loop.call_soon_threadsafe(settle)

        with self._lock:
            if self._result is not None:
                return self._result
            self._done_callbacks.append(_Direct(done))
        return await future

    # ---- start
    def _prepare(self) -> Tuple[List[str], Dict[str, str], Optional[str]]:
        t = self.target
        if t.kind not in ("script", "module", "pytest"):
            raise DebugError(f"unknown target kind {t.kind!r}")
        cwd = os.path.abspath(t.cwd) if t.cwd else None
        if cwd is not None and not os.path.isdir(cwd):
            raise DebugError(f"working directory not found: {t.cwd}")
        if t.kind == "script":
            base = cwd or os.getcwd()
            path = t.value if os.path.isabs(t.value) else os.path.join(base, t.value)
            if not os.path.isfile(path):
                raise DebugError(f"script not found: {t.value}")
            self.target = t = Target(t.kind, os.path.abspath(path), t.args, t.cwd)
        remote = bool(self.options.launcher_template)
        if remote and self.options.python:
            python = self.options.python  # lives on the other machine: not checked here
        else:
            python = resolve_python(self.options.python)
        if self.options.results_dir:
            out = Path(self.options.results_dir).expanduser().resolve()
            out.mkdir(parents=True, exist_ok=True)
        elif remote:
            # must be visible from the node that runs the target: the working directory is the
            # most likely shared folder
            base = Path(cwd or os.getcwd()) / ".gradwarden" / "debug-runs"
            base.mkdir(parents=True, exist_ok=True)
            out = Path(tempfile.mkdtemp(prefix="run-", dir=str(base)))
            self._own_out_dir = True
        else:
            out = Path(tempfile.mkdtemp(prefix="gradwarden-debug-"))
            self._own_out_dir = True
        for stale in list(out.glob("events.*.jsonl")) + list(out.glob("crash.*.txt")):
            try:
                stale.unlink()
            except OSError:
                pass
        self._out_dir = out
        argv = build_command(t, self.options, str(out), python)
        env = run_environment(self.options)
        return argv, env, cwd

    def _launch(self, argv: List[str], env: Dict[str, str], cwd: Optional[str]) -> None:
        o = self.options
        stdout: Any = None
        stderr: Any = None
        if o.output == "log":
            assert o.log_path
            Path(o.log_path).expanduser().parent.mkdir(parents=True, exist_ok=True)
            self._log_fh = open(Path(o.log_path).expanduser(), "wb")
            stdout = self._log_fh
            stderr = subprocess.STDOUT
        elif o.output == "discard":
            stdout = subprocess.DEVNULL
            stderr = subprocess.DEVNULL
        elif o.output == "stderr":
            stdout = sys.stderr.fileno() if _has_fileno(sys.stderr) else subprocess.DEVNULL
        if self.zygote is not None:
            self._launch_forked(argv, env, cwd)
            return
        kwargs: Dict[str, Any] = {}
        if os.name == "nt":  # pragma: no cover
            kwargs["creationflags"] = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
        else:
            kwargs["start_new_session"] = True
        self._emit_progress("starting", f"starting {self.target.describe()}")
        try:
            stdin = None if o.stdin == "inherit" else subprocess.DEVNULL
            self._proc = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr,
                                          env=env, cwd=cwd, **kwargs)
        except FileNotFoundError as exc:
            self._close_log()
            raise DebugError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        except OSError as exc:
            self._close_log()
            raise DebugError(f"cannot start {argv[0]}: {exc.strerror or exc}") from exc
        self._pgid = self._proc.pid if os.name != "nt" else None

    def _launch_forked(self, argv: List[str], env: Dict[str, str], cwd: Optional[str]) -> None:
        o = self.options
        assert self.zygote is not None
        if o.launcher != "none" or o.launcher_template:
            raise DebugError("a zygote cannot run launchers (torchrun, templates)")
        stdout: Optional[str]
        stderr: Optional[str]
        if o.output == "log":
            stdout, stderr = str(Path(o.log_path or "").expanduser()), "stdout"
            Path(stdout).parent.mkdir(parents=True, exist_ok=True)
            Path(stdout).write_bytes(b"")
        elif o.output == "discard":
            stdout, stderr = "devnull", "devnull"
        else:  # inherit / stderr: the zygote's stderr, which is ours
            stdout, stderr = None, None
        self._emit_progress("starting", f"starting {self.target.describe()}")
        # argv = [python, _child.py, --gw-config, ...]: the zygote takes what follows _child.py
        self._proc = self.zygote.spawn(argv[2:], env, cwd, stdout, stderr)  # type: ignore[assignment]
        self._pgid = self._proc.pid if os.name != "nt" else None

    # ---- monitor thread
    def _monitor(self) -> None:
        proc = self._proc
        assert proc is not None
        o = self.options
        deadline = self._started_at + o.timeout if o.timeout else None
        reason: Optional[str] = None
        try:
            while proc.poll() is None:
                if self._cancel.is_set():
                    reason = STATUS_CANCELLED
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    reason = STATUS_TIMEOUT
                    break
                self._poll_events()
                self._cancel.wait(o.poll_interval)
            if reason is not None:
                self._emit_progress("running", "stopping the run" if reason == STATUS_CANCELLED
                                    else f"timeout after {o.timeout:g} s: stopping the run")
            # whatever is left of the tree (the target's own children, torchrun workers ...)
            kill_tree(proc, self._pgid, o.grace if reason is not None else 0.5)
            self._poll_events()
            result = self._collect(reason)
        except BaseException as exc:  # noqa: BLE001 - never leave a waiter hanging
            try:
                kill_tree(proc, self._pgid, 0.0)
            except Exception:  # noqa: BLE001
                pass
            result = DebugResult(status=STATUS_ERROR, message=f"internal error: {type(exc).__name__}: {exc}",
                                 error=f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._close_log()
        self._finish(result)

    def _finish(self, result: DebugResult) -> None:
        with self._lock:
            self._result = result
            callbacks = list(self._done_callbacks)
            self._done_callbacks.clear()
        self._cleanup_dir()
        self._done.set()
        self._emit_progress("done", result.message, finding=None)
        for fn in callbacks:
            self._call(fn, result)

    def _call(self, fn: Callable[..., None], *args: Any) -> None:
        if isinstance(fn, _Direct):
            fn(*args)
            return
        if self._loop is not None:
            try:
                self._loop.call_soon_threadsafe(fn, *args)
                return
            except RuntimeError:  # loop closed
                return
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a callback's bug must not kill the monitor
            import traceback

            traceback.print_exc()

    def _emit_progress(self, stage: str, message: str, finding: Optional[Finding] = None) -> None:
        if self._on_progress is None:
            return
        calls = sum(self._events.backward_calls.values()) if self._events.backward_calls else 0
        self._call(self._on_progress, Progress(stage, message, calls, time.monotonic() - self._started_at,
                                               finding))

    def _poll_events(self) -> None:
        out = self._out_dir
        if out is None:
            return
        for path in sorted(out.glob("events.*.jsonl")):
            try:
                size = path.stat().st_size
            except OSError:
                continue
            offset = self._offsets.get(path, 0)
            if size <= offset:
                continue
            try:
                with open(path, "rb") as fh:
                    fh.seek(offset)
                    data = fh.read(size - offset)
            except OSError:
                continue
            self._offsets[path] = offset + len(data)
            data = self._partial.pop(path, b"") + data
            lines = data.split(b"\n")
            if lines and lines[-1]:
                self._partial[path] = lines[-1]
            for line in lines[:-1]:
                self._handle_line(line)

    def _handle_line(self, line: bytes) -> None:
        import json

        if not line.strip():
            return
        try:
            ev = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return
        if not isinstance(ev, dict):
            return
        new = self._events.add(ev)
        kind = ev.get("ev")
        if new is not None:
            where = f" at {new.location}" if new.location else ""
            self._emit_progress("finding", f"{new.code} {new.kind}{where}", finding=new)
        elif kind == "backward":
            self._emit_progress("backward", f"backward call {ev.get('n')}")
        elif kind == "start":
            self._emit_progress("running", f"running on torch {ev.get('torch')}")

    # ---- results
    def _collect(self, reason: Optional[str]) -> DebugResult:
        proc = self._proc
        assert proc is not None
        run = self._events
        rc = proc.returncode
        duration = time.monotonic() - self._started_at
        crash = self._crash_report()
        sig_name: Optional[str] = None
        if rc is not None and rc < 0:
            try:
                sig_name = signal.Signals(-rc).name
            except ValueError:
                sig_name = f"signal {-rc}"
        # the exit event of each rank's main process
        exits = [run.main_exit(rank) for rank in run.ranks]
        exits = [e for e in exits if e is not None]
        start = next(iter(run.starts.values()), {})
        hello = next(iter(run.hello.values()), {})
        device = ", ".join(sorted({str(e.get("device")) for e in exits if e.get("device")})) or str(
            start.get("device", "") if start.get("device") not in (None, "auto") else "")
        exception, failed_rank = first_failure(exits)
        result = DebugResult(
            status=STATUS_OK,
            message="",
            exit_code=rc if rc is not None and rc >= 0 else None,
            signal=sig_name,
            exception=exception,
            device=device,
            torch_version=str(start.get("torch", "")),
            python_version=str(hello.get("python", "")),
            backward_calls=max(run.backward_calls.values()) if run.backward_calls else 0,
            ranks=tuple(run.ranks),
            duration=duration,
            log_path=self.options.log_path if self.options.output == "log" else None,
            results_dir=str(self._out_dir) if not self._own_out_dir else None,
            crash=crash,
            runtime_findings=list(run.findings),
            premises=list(run.premises),
            coverage={k: set(v) for k, v in run.coverage.items()},
            files=tuple(sorted(run.files.values())),
        )
        fatal = run.fatal[0] if run.fatal else None
        if reason == STATUS_CANCELLED:
            result.status, result.message = STATUS_CANCELLED, "cancelled"
        elif reason == STATUS_TIMEOUT:
            result.status, result.message = STATUS_TIMEOUT, f"timed out after {self.options.timeout:g} s"
        elif fatal is not None:
            result.status = STATUS_ERROR
            result.error = _fatal_message(fatal)
            result.message = result.error
        elif not run.hello:
            result.status = STATUS_ERROR
            result.error = (f"the debug run did not start (exit status {rc}); "
                            + ("see the log" if self.options.output == "log" else "see the output above"))
            result.message = result.error
        elif any(e.get("status") == "max-steps" for e in exits):
            result.status = STATUS_STOPPED
            result.message = f"stopped after {result.backward_calls} backward call(s) (--max-steps)"
        elif sig_name is not None or (not exits and rc not in (0, None)):
            result.status = STATUS_CRASHED
            result.message = f"the target crashed ({sig_name or f'exit status {rc}'})"
        elif rc == 0:
            result.status, result.message = STATUS_OK, "the target finished"
        else:
            result.status = STATUS_FAILED
            short = exception if exception is None or len(exception) <= 160 else exception[:157] + "..."
            on_rank = f" on rank {failed_rank}" if failed_rank is not None and len(run.ranks) > 1 else ""
            result.message = (f"the target failed{on_rank}: {short}" if exception
                              else f"the target exited with status {rc}")
        if result.status != STATUS_ERROR and self.options.static:
            self._emit_progress("analyzing", "confirming the static diagnostics")
            result.findings, result.static_error = confirm_static(self.target, run)
        else:
            result.findings = list(run.findings)
        return result

    def _crash_report(self) -> Optional[str]:
        out = self._out_dir
        if out is None:
            return None
        texts = []
        for path in sorted(out.glob("crash.*.txt")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                continue
            if text:
                texts.append(text)
        return "\n".join(texts) if texts else None

    def _close_log(self) -> None:
        if self._log_fh is not None:
            try:
                self._log_fh.close()
            except OSError:
                pass
            self._log_fh = None

    def _cleanup_dir(self) -> None:
        if self._own_out_dir and self._out_dir is not None:
            shutil.rmtree(self._out_dir, ignore_errors=True)
            self._own_out_dir = False


def first_failure(exits: Sequence[Mapping[str, Any]]) -> Tuple[Optional[str], Optional[str]]:
    """(exception, rank) of the process that failed first. With several ranks the others fail
    later, of the first one's death (gloo's "Connection closed by peer"): quoting them would
    hide the cause."""
    failed = [e for e in exits if e.get("exc_type")]
    if not failed:
        return None, None

    def when(e: Mapping[str, Any]) -> float:
        try:
            return float(e.get("t") or 0.0)
        except (TypeError, ValueError):
            return 0.0

    first = min(failed, key=when)
    return f"{first.get('exc_type')}: {first.get('exc')}", str(first.get("rank", "0"))


class _Direct:
    """A callback that must run on the monitor thread (it schedules itself)."""

    def __init__(self, fn: Callable[..., None]) -> None:
        self.fn = fn

    def __call__(self, *args: Any) -> None:
        self.fn(*args)


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
        return True
    except (AttributeError, ValueError, OSError):
        return False


def _fatal_message(ev: Mapping[str, Any]) -> str:
    reason = ev.get("reason")
    message = str(ev.get("message", "the debug run could not start"))
    if reason == "torch-missing":
        return (f"{message}. Install torch in that interpreter, or pass --python with the project's "
                f"interpreter (the one that can `import torch`).")
    return message


# --------------------------------------------------------------------------- static side
MAX_STATIC_FILES = 400


def confirm_static(target: Target, run: RunEvents) -> Tuple[List[Finding], Optional[str]]:
    """Run the static engine on the user's files that ran and classify every diagnostic."""
    files: List[str] = []
    seen: Set[str] = set()
    candidates = list(run.files.values())
    if target.kind == "script":
        candidates.insert(0, target.value)
    for fn in candidates:
        if not fn.endswith(".py") or not os.path.isfile(fn):
            continue
        key = os.path.normcase(os.path.realpath(fn))
        if key in seen:
            continue
        seen.add(key)
        files.append(fn)
    files = files[:MAX_STATIC_FILES]
    diags = []
    problem: Optional[str] = None
    try:
        from gradwarden.config import ConfigError, load_settings
        from gradwarden.runner import check_path

        settings_cache: Dict[str, Any] = {}
        for fn in files:
            folder = os.path.dirname(os.path.abspath(fn))
            settings = settings_cache.get(folder)
            if settings is None:
                try:
                    settings = load_settings(Path(fn))
                except ConfigError as exc:
                    problem = str(exc)
                    settings = False
                settings_cache[folder] = settings
            outcome = check_path(fn, fn)
            if outcome.error:
                problem = outcome.error
            found = outcome.diagnostics
            if settings:
                found = settings.apply(found)
            diags.extend(d for d in found if d.code != "GW001")
    except Exception as exc:  # noqa: BLE001 - the run's findings still count
        problem = f"static analysis failed: {type(exc).__name__}: {exc}"
    return classify(diags, run.findings, run.coverage, run.premises), problem


def run_debug(target: Target, options: Optional[DebugOptions] = None,
              on_progress: Optional[ProgressCallback] = None) -> DebugResult:
    """Start a session and wait for its result (blocking convenience)."""
    session = DebugSession(target, options, on_progress=on_progress)
    session.start()
    try:
        result = session.wait()
    except KeyboardInterrupt:
        session.cancel()
        result = session.wait()
    assert result is not None
    return result
