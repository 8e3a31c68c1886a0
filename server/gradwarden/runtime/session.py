"""DebugSession: one instrumented run of the user's code in a child process (parent side).

Never imports torch. The child (``_child.py``) runs under the target interpreter; this side
starts it (``command``: its command line, plain, torchrun, or a user's launcher template; or
forked from a warm ``zygote``) in its own process group, follows its event files for progress,
enforces the timeout, kills the whole process tree on cancellation (``proctree``), and finally
confronts what the run saw with the static engine (``confirm``). What a run is asked and what it
gives back (``Target``, ``DebugOptions``, ``DebugResult``) live in ``options``; this module
re-exports them, so ``gradwarden.runtime.session`` keeps every name it had.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from gradwarden.runtime.command import (
    CHILD_PATH,
    EXIT_BAD_CONFIG,
    EXIT_NO_CUDA,
    EXIT_TORCH_MISSING,
    _fatal_message,
    build_command,
    child_config,
    encode_config,
    resolve_python,
    run_environment,
)
from gradwarden.runtime.confirm import MAX_STATIC_FILES, confirm_static
from gradwarden.runtime.findings import Finding, RunEvents, shown_at_static_cause
from gradwarden.runtime.options import (
    DEVICES,
    LAUNCHERS,
    OUTPUTS,
    STATUS_CANCELLED,
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_FAILED,
    STATUS_OK,
    STATUS_STOPPED,
    STATUS_TIMEOUT,
    STDINS,
    DebugError,
    DebugOptions,
    DebugResult,
    DoneCallback,
    Progress,
    ProgressCallback,
    Target,
)
from gradwarden.runtime.proctree import kill_tree, process_tree
from gradwarden.runtime.zygote import Zygote

__all__ = [
    "CHILD_PATH", "DEVICES", "EXIT_BAD_CONFIG", "EXIT_NO_CUDA", "EXIT_TORCH_MISSING", "LAUNCHERS", "MAX_STATIC_FILES",
    "OUTPUTS", "STATUS_CANCELLED", "STATUS_CRASHED", "STATUS_ERROR", "STATUS_FAILED", "STATUS_OK", "STATUS_STOPPED",
    "STATUS_TIMEOUT", "STDINS", "DebugError", "DebugOptions", "DebugResult", "DebugSession", "DoneCallback",
    "Progress", "ProgressCallback", "Target", "Zygote", "build_command", "child_config", "confirm_static",
    "encode_config", "first_failure", "kill_tree", "process_tree", "resolve_python", "run_debug", "run_environment",
]


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
            moved = shown_at_static_cause(result.findings)
            if moved:
                result.runtime_findings = [moved.get(id(f), f) for f in result.runtime_findings]
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
