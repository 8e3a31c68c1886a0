"""Shrink a disagreeing program to a minimal reproduction (greedy statement deletion).

A *unit* is a statement line with its indented block (module-level calls and the
``__main__`` guard excepted: the program must keep running). Passes over the program try to delete
each unit (or, when deleting leaves a block empty, to replace it by ``pass``); a deletion is
kept when the smaller program still compiles, torch still gives the same outcome class, and the
engine still disagrees the same way (``missed``: no error diagnostic; ``false-error``: an error
diagnostic with one of the same codes; ``missed-silent``: nothing loud; ``false-warning``: a
warning with one of the same codes and no error). torch runs go to one streaming warm server (one torch
import for the whole shrink). Passes repeat until nothing more can go or the budget of torch
runs is spent.
"""
from __future__ import annotations

import ast
import itertools
from pathlib import Path
from typing import Callable, List, Optional, Set, Tuple

from .oracle import Record, _analyze, classify

_counter = itertools.count()


def _units(lines: List[str]) -> List[Tuple[int, int]]:
    """(start, end) line ranges, end exclusive: a statement and the lines indented under it."""
    out = []
    n = len(lines)
    for i, ln in enumerate(lines):
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        ind = len(ln) - len(ln.lstrip())
        j = i + 1
        while j < n and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ind):
            j += 1
        while j > i + 1 and not lines[j - 1].strip():
            j -= 1
        out.append((i, j))
    return out


def _entry_points(lines: List[str]) -> Set[int]:
    """Module-level calls and ``if __name__ == "__main__":`` blocks (0-based first lines): never
    deleted, or a program that ran clean would stay clean by no longer running anything."""
    try:
        tree = ast.parse("\n".join(lines) + "\n")
    except SyntaxError:
        return set()
    out = set()
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            out.add(node.lineno - 1)
        elif isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            out.update(range(node.lineno - 1, (node.end_lineno or node.lineno)))
    return out


def _compiles(text: str) -> bool:
    try:
        compile(text, "<shrink>", "exec")
        return True
    except SyntaxError:
        return False


def shrink(rec: Record, run_torch: Callable[[str], dict], max_runs: int = 200) -> Tuple[str, Tuple[int, ...], int]:
    """The smallest program found, its planted lines (renumbered; those deleted are dropped), and
    the number of torch runs spent. ``run_torch(text)`` returns a torch_runner summary."""
    want_cls = rec.torch.cls
    want_codes: Set[str] = {d.code for d in rec.errors}
    want_loud: Set[str] = {d.code for d in rec.loud}
    verdict = rec.verdict

    def engine_ok(text: str) -> bool:
        diags, crash = _analyze((text, "shrunk.py"))
        if crash:
            return False
        errors = {d.code for d in diags if d.severity == 1}
        loud = {d.code for d in diags if d.severity in (1, 2)}
        if verdict == "missed":
            return not errors
        if verdict == "false-error":
            return bool(errors & want_codes)
        if verdict == "missed-silent":
            return not loud
        if verdict == "false-warning":
            return not errors and bool(loud & want_loud)
        return False

    lines = rec.program.text.splitlines()
    origin = list(range(1, len(lines) + 1))  # original line number of each current line
    # A silent outcome survives deleting the hazard itself (a program that never runs backward leaves
    # every parameter without a gradient too): for a missed silent hazard the planted lines and the
    # backward calls stay, so the shrunk program still shows the planted cause.
    keep: Set[int] = set()
    if verdict == "missed-silent":
        keep = set(rec.program.cause_lines) | {i + 1 for i, ln in enumerate(lines) if ".backward(" in ln}
    runs = 0
    changed = True
    while changed and runs < max_runs:
        changed = False
        # last unit first: a deletion moves only the lines after it, so the earlier starts stay valid
        protected = _entry_points(lines)
        for start in sorted({u[0] for u in _units(lines)} - protected, reverse=True):
            if runs >= max_runs or start >= len(lines):
                continue
            end = next((e for s_, e in _units(lines) if s_ == start), None)
            if end is None or keep & set(origin[start:end]):
                continue
            ind = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            for replacement in ([], [ind + "pass"]):
                cand = lines[:start] + replacement + lines[end:]
                text = "\n".join(cand) + "\n"
                if not _compiles(text) or not engine_ok(text):
                    continue
                runs += 1
                if classify(run_torch(text)).cls != want_cls:
                    continue
                origin = origin[:start] + [0] * len(replacement) + origin[end:]
                lines = cand
                changed = True
                break
    # cosmetic: no runs of blank lines (line numbers renumbered with them)
    out, out_origin = [], []
    for ln, o in zip(lines, origin):
        if not ln.strip() and out and not out[-1].strip():
            continue
        out.append(ln)
        out_origin.append(o)
    kept = tuple(i + 1 for i, o in enumerate(out_origin) if o in rec.program.cause_lines)
    return "\n".join(out).strip("\n") + "\n", kept, runs


def torch_runner_for(workdir: Path):
    """A ``run_torch(text)`` backed by one streaming warm server, and its closer."""
    import sys

    here = Path(__file__).resolve().parents[1]
    if str(here) not in sys.path:
        sys.path.insert(0, str(here))
    from torch_runner import Job, WarmServer

    server: Optional[WarmServer] = None
    folder = workdir / "shrink"
    folder.mkdir(parents=True, exist_ok=True)

    def run_torch(text: str) -> dict:
        nonlocal server
        if server is None:
            server = WarmServer([], workdir, stream=True)
        k = next(_counter)
        path = folder / f"c{k}.py"
        path.write_text(text)
        return server.submit(Job(f"c{k}", path, timeout=60)).result().summary

    def close() -> None:
        if server is not None:
            server.close()

    return run_torch, close
