"""The process tree of a run: every descendant of the child (``/proc``, else ``ps``), signalled
as a whole, then killed after a grace period (parent side)."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from typing import Dict, List, Optional, Set, Tuple

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


