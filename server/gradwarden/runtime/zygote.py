"""Zygote: a warm interpreter that has imported torch once and forks one run per session
(parent side: it speaks to that interpreter through a pipe, never imports torch itself)."""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from typing import Any, Dict, List, Mapping, Optional, Sequence

from gradwarden.runtime.command import CHILD_PATH, _fatal_message, resolve_python
from gradwarden.runtime.options import DebugError
from gradwarden.runtime.proctree import kill_tree

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


