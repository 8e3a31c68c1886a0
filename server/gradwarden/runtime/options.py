"""What a debug run is asked and what it gives back: the target, the options, progress reports
and the result (parent side, never imports torch)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.runtime.findings import (
    CONFIRMED,
    NOT_REACHED,
    NOT_REPRODUCED,
    RUNTIME_ONLY,
    Finding,
)

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

