#!/usr/bin/env python3
"""Instruction counts of ``gradwarden check`` over a tree against ``ast.parse`` of the same
files (a measurement, not a test; needs valgrind).

    python benchmarks/instr_timm.py [--tree DIR] [--baseline-rev REV] [--format json|concise]

Timings of a whole ``check`` on this 2-core machine move by a third between runs; the number
of instructions executed does not (callgrind, ``PYTHONHASHSEED=0``, bytecode compiled
beforehand). Measured, each in its own process under callgrind:

- ``ast.parse`` of every file: a process that reads every file and parses it, less one that
  only reads them (start-up and reading are not the parse);
- ``analyze_source`` of every file, in one process (less the same reading process);
- ``gradwarden check TREE --no-cache --output-format FORMAT`` with its worker processes. A
  worker is forked: callgrind's count for it starts from its parent's count at the fork, so
  each worker counts its own work only after the parent's count at the moment the pool starts
  is taken off it (measured by a second run of the parent that stops there). A child that runs
  another program (jedi's subprocess: its command line is not the parent's) counts from its own
  start. A child whose file holds no count (jedi's subprocess, ended by its parent before
  callgrind wrote its counts) is left out of the figure and named on stderr; the number left out
  is printed with the counts.

Printed: each count in G instructions and as a multiple of ``ast.parse``'s (target for
``check``: <= 3x); with ``--baseline-rev REV`` the same for that revision's code (``git archive
REV server``, run by the same interpreter through ``PYTHONPATH``), side by side. A run takes
about six minutes per revision (callgrind runs some fifty times slower than the program).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, List, NamedTuple, Optional, Tuple

from revisions import server_of  # beside this script (benchmarks/)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TREE = REPO / "benchmarks" / ".cache" / "timm-1.0.31" / "timm"
TARGET = 3.0

READ_AND = r"""
import ast, sys
from pathlib import Path
srcs = [(str(p), p.read_bytes()) for p in sorted(Path(sys.argv[2]).rglob("*.py"))]
if sys.argv[1] == "parse":
    for name, data in srcs:
        ast.parse(data, filename=name)
elif sys.argv[1] == "analyze":
    from gradwarden.engine.analyze import analyze_source
    for name, data in srcs:
        analyze_source(data, name)
"""

# The parent of a check, stopped where its worker pool would start.
UNTIL_POOL = r"""
import os, sys
import concurrent.futures.process as pool
pool.ProcessPoolExecutor.__init__ = lambda *a, **k: os._exit(0)
from gradwarden import cli
sys.exit(cli.main(sys.argv[1:]))
"""


def _env(src: Path) -> Dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class Run(NamedTuple):
    """What callgrind wrote for one traced run: ``counts`` {pid: (instructions, command line)}
    of the processes that reported, the process started first; ``left_out`` one line per
    process whose file holds no count (a child ended before callgrind could write it, e.g. a
    jedi subprocess its parent kills at exit): its pid and command line where the file has one."""
    counts: Dict[int, Tuple[int, str]]
    left_out: List[str]


def _report(text: str) -> Tuple[Optional[int], str]:
    """(instructions or None, command line) of one callgrind output file's text."""
    count, cmd = None, ""
    for line in text.splitlines():
        if line.startswith("cmd:") and not cmd:
            cmd = line[4:].strip()
        elif line.startswith("summary:") or line.startswith("totals:"):
            try:
                count = int(line.split()[1])
            except (IndexError, ValueError):
                continue
            break
    return count, cmd


def read_run(out_dir: Path, first: int) -> Run:
    """The counts of every ``cg.PID`` file in ``out_dir``; ``first`` (the process started) must
    have reported, any other process that did not is left out and named."""
    counts: Dict[int, Tuple[int, str]] = {}
    left_out: List[str] = []
    for path in sorted(out_dir.glob("cg.*"), key=lambda p: int(p.name.split(".")[1])):
        pid = int(path.name.split(".")[1])
        count, cmd = _report(path.read_text(errors="replace"))
        if count is None:
            left_out.append(f"pid {pid}: {cmd or '(no command line written)'}")
        else:
            counts[pid] = (count, cmd)
    if first not in counts:
        raise RuntimeError(f"no count for the process started (pid {first}) in {out_dir}")
    ordered = {first: counts.pop(first)}
    ordered.update(counts)
    return Run(ordered, left_out)


def _callgrind(argv: List[str], src: Path, out_dir: Path, children: bool = False) -> Run:
    """The instructions of ``argv`` (and of its children) under callgrind."""
    for old in out_dir.glob("cg.*"):
        old.unlink()
    cmd = ["valgrind", "--tool=callgrind", f"--trace-children={'yes' if children else 'no'}",
           f"--callgrind-out-file={out_dir}/cg.%p", *argv]
    proc = subprocess.Popen(cmd, cwd=REPO, env=_env(src), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    _, err = proc.communicate()
    if proc.returncode not in (0, 1):  # check exits 1 when it finds something
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err[-2000:]}")
    return read_run(out_dir, proc.pid)


def _first(run: Run) -> int:
    return next(iter(run.counts.values()))[0]


def split_check(run: Run, at_fork: int) -> Dict[str, int]:
    """A check's instructions from its traced run: the parent; its forked workers (the same
    command line as the parent's), each less the parent's count at the fork; other children
    (a program a child started: jedi's subprocess), their own count."""
    (parent, parent_cmd), *children = run.counts.values()
    workers = [c - at_fork for c, cmd in children if cmd == parent_cmd]
    others = [c for c, cmd in children if cmd != parent_cmd]
    return {"check": parent + sum(workers) + sum(others), "check: parent": parent,
            "check: workers": sum(workers), "check: other children": sum(others),
            "check: parent before the pool": at_fork, "left out (no count)": len(run.left_out)}


def measure(src: Path, tree: Path, fmt: str, work: Path) -> Dict[str, int]:
    py = sys.executable
    subprocess.run([py, "-m", "compileall", "-q", str(src / "gradwarden")], check=True, env=_env(src))
    subprocess.run([py, "-m", "gradwarden", "--version"], check=True, env=_env(src), stdout=subprocess.DEVNULL)
    out: Dict[str, int] = {}
    reading = _first(_callgrind([py, "-c", READ_AND, "none", str(tree)], src, work))
    out["ast.parse"] = _first(_callgrind([py, "-c", READ_AND, "parse", str(tree)], src, work)) - reading
    out["analyze_source"] = _first(_callgrind([py, "-c", READ_AND, "analyze", str(tree)], src, work)) - reading
    check = ["check", str(tree), "--no-cache", "--output-format", fmt]
    run = _callgrind([py, "-m", "gradwarden", *check], src, work, children=True)
    at_fork = _first(_callgrind([py, "-c", UNTIL_POOL, *check], src, work))
    out.update(split_check(run, at_fork))
    for line in run.left_out:  # said, not hidden: the check's figure lacks these processes
        print(f"instr: left out of check's count (callgrind wrote no count): {line}", file=sys.stderr)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tree", type=Path, default=DEFAULT_TREE, help="folder of .py files (default: timm 1.0.31)")
    ap.add_argument("--baseline-rev", help="also measure this git revision's code")
    ap.add_argument("--format", default="json", help="check's --output-format (default: json)")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)", file=sys.stderr)
        return 2
    if not args.tree.is_dir():
        print(f"no tree at {args.tree} (python benchmarks/lint_timm.py --setup-only unpacks timm)", file=sys.stderr)
        return 2
    columns: Dict[str, Dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="gw-instr-") as tmp:
        work = Path(tmp)
        if args.baseline_rev:
            base = work / "base"
            base.mkdir()
            columns[f"before ({args.baseline_rev})"] = measure(server_of(args.baseline_rev, base), args.tree,
                                                               args.format, work)
        columns["this tree"] = measure(REPO / "server", args.tree, args.format, work)
    names = list(next(iter(columns.values())))
    print(f"instructions (G), {args.tree}, check --output-format {args.format}")
    print(f"{'':34}" + "".join(f"{c:>26}" for c in columns))
    for name in names:
        cells = []
        for col in columns.values():
            parse = col["ast.parse"]
            if name == "left out (no count)":  # a number of processes, not instructions
                cells.append(f"{col[name]:9d}" + " " * 16)
                continue
            g = col[name] / 1e9
            cells.append(f"{g:9.2f}" + (f" ({col[name] / parse:4.2f}x parse)" if name in ("analyze_source", "check") else " " * 16))
        print(f"{name:34}" + "".join(f"{c:>26}" for c in cells))
    verdict = columns["this tree"]["check"] / columns["this tree"]["ast.parse"]
    print(f"check vs ast.parse: {verdict:.2f}x (target <= {TARGET:.0f}x: {'met' if verdict <= TARGET else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
