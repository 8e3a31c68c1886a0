#!/usr/bin/env python3
"""Start-up and re-run costs of ``gradwarden`` (a measurement, not a test).

    python benchmarks/bench_startup.py [--repeat 7] [--tree DIR ...] [--baseline-rev REV]
                                       [--ruff PATH] [--json OUT]

Every command runs as a fresh process (what pre-commit and an editor's save hook pay), the
measures interleaved round-robin so that a change of machine load hits them all alike; each
line is the median of ``--repeat`` runs (wall time, and the CPU time of the process and its
children). Measured in the same run, as named baselines:

- ``python -c pass``: the interpreter's own start-up; ``--version``, ``rules`` and ``check``
  on a 2-line file are printed as multiples of it (targets: ``--version`` <= 5x, ``check`` on
  2 lines <= 8x);
- ``initialize``: spawning ``gradwarden serve`` until its answer to ``initialize`` (<= 0.3 s
  on a quiet machine);
- a tree (default: timm 1.0.31 as ``benchmarks/lint_timm.py`` unpacks it, else
  ``/tmp/w/timm/timm``, else the repository's ``examples/`` and ``tests/data``): ``ast.parse``
  of every file (one process), ``check`` with an empty cache (cold: a new ``--cache-dir``
  each run) and with a filled one (warm: unchanged tree), ``--tree-repeat`` runs. Targets: warm <=
  0.25x cold; cold <= 3x ``ast.parse``;
- ruff, when found (``--ruff PATH``, else ``ruff`` on PATH): ``--version``, ``check`` of the
  2-line file and of the tree, without and with its cache;
- bytecode: ``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment (an
  installed package has its ``.pyc``; the untimed warm-up run writes them);
- ``--baseline-rev REV`` (or ``--baseline-src DIR``, a folder holding a ``gradwarden``
  package): the same gradwarden measures with that version's code (``git archive REV server``
  unpacked in a temporary folder, run with the same interpreter through ``PYTHONPATH``), in
  the same run; printed as a "before" column.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from revisions import server_of  # beside this script (benchmarks/)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TIMM_CANDIDATES = (HERE / ".cache" / "timm-1.0.31" / "timm", Path("/tmp/w/timm/timm"))
TWO_LINES = "import torch\nx = torch.ones(2)\n"

TARGET_VERSION = 5.0  # x python -c pass
TARGET_CHECK_TWO = 8.0
TARGET_INITIALIZE_S = 0.3
TARGET_WARM_VS_COLD = 0.25
TARGET_COLD_VS_AST = 3.0


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- running
def timed(cmd: Sequence[str], cwd: Path, env: Dict[str, str]) -> Tuple[float, float, int]:
    """(wall s, cpu s of the process and what it waited for, exit code)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(list(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"failed (exit {proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()[-2000:]}")
    return wall, cpu, proc.returncode


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_message(stream) -> Optional[dict]:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length)) if length is not None else None


def initialize_time(cmd: Sequence[str], cwd: Path, env: Dict[str, str]) -> Tuple[float, float, int]:
    """Wall time from spawning the server to its answer to ``initialize`` (no CPU figure)."""
    start = time.perf_counter()
    proc = subprocess.Popen(list(cmd), cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                 "params": {"processId": None, "rootUri": None, "capabilities": {}}}))
        proc.stdin.flush()
        while True:
            message = _read_message(proc.stdout)
            if message is None:
                raise SystemExit(f"the server closed its output before answering initialize: {' '.join(cmd)}")
            if message.get("id") == 1:
                break
        wall = time.perf_counter() - start
        proc.stdin.write(_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.write(_frame({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return wall, float("nan"), 0


class Measure:
    def __init__(self, label: str, run: Callable[[int], Tuple[float, float, int]], group: str = "",
                 warmup: bool = True) -> None:
        self.label = label
        self.run = run
        self.group = group
        self.warmup = warmup  # an untimed first run (bytecode caches, a warm cache filled)
        self.walls: List[float] = []
        self.cpus: List[float] = []

    @property
    def wall(self) -> float:
        return statistics.median(self.walls)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpus)


# --------------------------------------------------------------------------- set-up
def gradwarden_command(python: str) -> List[str]:
    """The console script beside the interpreter (what users run), else ``python -m``."""
    script = Path(python).parent / ("gradwarden.exe" if os.name == "nt" else "gradwarden")
    return [str(script)] if script.exists() else [python, "-m", "gradwarden"]


def find_tree(given: Sequence[str]) -> List[Path]:
    if given:
        return [Path(t).resolve() for t in given]
    for candidate in TIMM_CANDIDATES:
        if candidate.is_dir():
            return [candidate]
    return [REPO / "examples", REPO / "tests" / "data"]


def tree_files(roots: Sequence[Path]) -> List[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py"))


def find_ruff(given: Optional[str]) -> Optional[str]:
    if given:
        return given
    return shutil.which("ruff")


# --------------------------------------------------------------------------- main
def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs of each start-up measure (the median is printed)")
    ap.add_argument("--tree-repeat", type=int, default=3, help="runs of each measure over the tree")
    ap.add_argument("--also-no-cache", action="store_true",
                    help="also time `check --no-cache` over the tree (what the cache costs a cold run)")
    ap.add_argument("--tree", action="append", default=[], metavar="DIR", help="the tree of the re-run measures")
    ap.add_argument("--baseline-rev", metavar="REV", help="also measure this git revision's gradwarden")
    ap.add_argument("--baseline-src", metavar="DIR", help="also measure the gradwarden package under DIR")
    ap.add_argument("--ruff", metavar="PATH", help="the ruff executable (default: ruff on PATH)")
    ap.add_argument("--json", metavar="OUT", help="also write the medians as JSON")
    args = ap.parse_args(argv)
    repeat = max(1, args.repeat)

    work = Path(tempfile.mkdtemp(prefix="gw-bench-startup-"))
    try:
        return _run(args, repeat, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args: argparse.Namespace, repeat: int, work: Path) -> int:
    python = sys.executable
    gw = gradwarden_command(python)
    # An installed package has its bytecode: PYTHONDONTWRITEBYTECODE (set on some machines)
    # would make every run compile every module, which is not what users pay.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GRADWARDEN_") and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    base_src: Optional[Path] = None
    if args.baseline_rev:
        base_src = server_of(args.baseline_rev, work / "baseline")
    elif args.baseline_src:
        base_src = Path(args.baseline_src).resolve()
    base_env = dict(env, PYTHONPATH=str(base_src)) if base_src else None
    ruff = find_ruff(args.ruff)

    cwd = work / "cwd"
    cwd.mkdir()
    two = cwd / "two.py"
    two.write_text(TWO_LINES)
    roots = find_tree(args.tree)
    files = tree_files(roots)
    n_lines = sum(p.read_bytes().count(b"\n") for p in files)
    list_file = work / "files.txt"
    list_file.write_text("\n".join(str(p) for p in files))
    parse_all = [python, "-c", "import ast, sys\nfor f in open(sys.argv[1]).read().split('\\n'):\n"
                               "    ast.parse(open(f, 'rb').read(), f)\n", str(list_file)]
    tree_args = [str(r) for r in roots]
    check = ["check", "--isolated", "--no-progress", "--output-format", "json"]
    cold_dirs = iter(range(10 ** 6))

    def cmd(command: List[str], e: Dict[str, str] = env) -> Callable[[int], Tuple[float, float, int]]:
        return lambda _i: timed(command, cwd, e)

    measures: List[Measure] = [
        Measure("python -c pass", cmd([python, "-c", "pass"]), "start"),
        Measure("gradwarden --version", cmd(gw + ["--version"]), "start"),
        Measure("gradwarden rules", cmd(gw + ["rules"]), "start"),
        Measure("gradwarden check 2-line file --no-cache", cmd(gw + check + ["--no-cache", str(two)]), "start"),
        Measure("gradwarden check 2-line file, warm cache",
                cmd(gw + check + ["--cache-dir", str(work / "two-cache"), str(two)]), "start"),
        Measure("gradwarden serve: initialize answered", lambda _i: initialize_time(gw + ["serve"], cwd, env), "start"),
        Measure("python: ast.parse of every file", cmd(parse_all), "tree"),
        Measure("gradwarden check, cold cache",
                lambda _i: timed(gw + check + ["--cache-dir", str(work / f"cold-{next(cold_dirs)}")] + tree_args,
                                 cwd, env), "tree", warmup=False),
        Measure("gradwarden check, warm cache", cmd(gw + check + ["--cache-dir", str(work / "warm")] + tree_args),
                "tree"),
    ]
    if args.also_no_cache:
        measures.append(Measure("gradwarden check --no-cache", cmd(gw + check + ["--no-cache"] + tree_args), "tree",
                                warmup=False))
    if base_env is not None:
        # A baseline that has the result cache runs without it (its analysis, like the
        # --no-cache and cold measures above); one from before the cache never had one.
        no_cache = ["--no-cache"] if base_src is not None and (base_src / "gradwarden" / "cache.py").exists() else []
        measures += [
            Measure("before: gradwarden --version", cmd(gw + ["--version"], base_env), "start"),
            Measure("before: gradwarden rules", cmd(gw + ["rules"], base_env), "start"),
            Measure("before: gradwarden check 2-line file", cmd(gw + check + no_cache + [str(two)], base_env),
                    "start"),
            Measure("before: gradwarden serve: initialize answered",
                    lambda _i: initialize_time(gw + ["serve"], cwd, base_env), "start"),  # type: ignore[arg-type]
            Measure("before: gradwarden check without a cache", cmd(gw + check + no_cache + tree_args, base_env),
                    "tree", warmup=False),
        ]
    if ruff:
        ruff_cache = ["--cache-dir", str(work / "ruff-cache")]
        measures += [
            Measure("ruff --version", cmd([ruff, "--version"]), "start"),
            Measure("ruff check 2-line file --no-cache", cmd([ruff, "check", "--isolated", "--no-cache", str(two)]),
                    "start"),
            Measure("ruff check --select ALL --no-cache",
                    cmd([ruff, "check", "--isolated", "--select", "ALL", "--no-cache", "--exit-zero"] + tree_args),
                    "tree"),
            Measure("ruff check --select ALL, warm cache",
                    cmd([ruff, "check", "--isolated", "--select", "ALL", "--exit-zero"] + ruff_cache + tree_args),
                    "tree"),
        ]

    log(f"{len(files)} files ({n_lines} lines) under {', '.join(tree_args)}; {repeat}/{args.tree_repeat} rounds of "
        f"{len(measures)} measures" + (f"; baseline {args.baseline_rev or base_src}" if base_src else ""))
    for m in measures:  # warm-up: bytecode caches, the warm caches filled; not timed
        if m.warmup:
            m.run(-1)
    tree_repeat = max(1, args.tree_repeat)
    for i in range(max(repeat, tree_repeat)):
        for m in measures:
            if i >= (tree_repeat if m.group == "tree" else repeat):
                continue
            wall, cpu, _ = m.run(i)
            m.walls.append(wall)
            m.cpus.append(cpu)
        log(f"round {i + 1}/{repeat} done")
    _report(measures, files, n_lines, tree_args, repeat, tree_repeat, args, ruff)
    return 0


def _report(measures: List[Measure], files: List[Path], n_lines: int, tree_args: List[str], repeat: int,
            tree_repeat: int, args: argparse.Namespace, ruff: Optional[str]) -> None:
    by = {m.label: m for m in measures}
    w = sys.stdout.write
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    w(f"\n=== gradwarden start-up and re-runs ({platform.python_implementation()} {platform.python_version()}, "
      f"{os.cpu_count()} cores, load {load:.1f} at the end; medians of {repeat}, {tree_repeat} over the tree) ===\n")
    pass_ = by["python -c pass"]
    parse = by["python: ast.parse of every file"]

    def line(m: Measure, base: Measure) -> None:
        cpu = "" if m.cpu != m.cpu else f"{m.cpu * 1000:9.0f}"
        rw = m.wall / base.wall
        rc = "" if m.cpu != m.cpu or base.cpu != base.cpu else f"{m.cpu / base.cpu:8.2f}x"
        w(f"{m.label:48} {m.wall * 1000:9.0f} {cpu:>9} {rw:8.2f}x {rc:>9}\n")

    w(f"\n{'start-up':48} {'wall ms':>9} {'cpu ms':>9} {'x pass':>9} {'cpu x':>9}\n")
    for m in measures:
        if m.group == "start":
            line(m, pass_)
    w(f"\ntree: {len(files)} files, {n_lines} lines ({', '.join(tree_args)})\n")
    w(f"{'re-runs':48} {'wall ms':>9} {'cpu ms':>9} {'x parse':>9} {'cpu x':>9}\n")
    for m in measures:
        if m.group == "tree":
            line(m, parse)

    cold, warm = by["gradwarden check, cold cache"], by["gradwarden check, warm cache"]
    version, two = by["gradwarden --version"], by["gradwarden check 2-line file --no-cache"]
    init = by["gradwarden serve: initialize answered"]

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    w("\ntargets (wall):\n")
    w(f"  --version / python -c pass: {version.wall / pass_.wall:.1f}x (<= {TARGET_VERSION:g}x: "
      f"{verdict(version.wall / pass_.wall <= TARGET_VERSION)})\n")
    w(f"  check 2-line file (--no-cache) / python -c pass: {two.wall / pass_.wall:.1f}x (<= {TARGET_CHECK_TWO:g}x: "
      f"{verdict(two.wall / pass_.wall <= TARGET_CHECK_TWO)}); warm cache: "
      f"{by['gradwarden check 2-line file, warm cache'].wall / pass_.wall:.1f}x\n")
    w(f"  initialize answered: {init.wall:.3f}s (<= {TARGET_INITIALIZE_S:g}s on a quiet machine: "
      f"{verdict(init.wall <= TARGET_INITIALIZE_S)})\n")
    w(f"  warm / cold re-run: {warm.wall / cold.wall:.3f}x (<= {TARGET_WARM_VS_COLD:g}x: "
      f"{verdict(warm.wall / cold.wall <= TARGET_WARM_VS_COLD)}); cpu {warm.cpu / cold.cpu:.3f}x\n")
    w(f"  cold / ast.parse: {cold.wall / parse.wall:.2f}x (<= {TARGET_COLD_VS_AST:g}x: "
      f"{verdict(cold.wall / parse.wall <= TARGET_COLD_VS_AST)}); cpu {cold.cpu / parse.cpu:.2f}x\n")
    befores = [m for m in measures if m.label.startswith("before: ")]
    if befores:
        pairs = [("gradwarden --version", "before: gradwarden --version"),
                 ("gradwarden rules", "before: gradwarden rules"),
                 ("gradwarden check 2-line file --no-cache", "before: gradwarden check 2-line file"),
                 ("gradwarden serve: initialize answered", "before: gradwarden serve: initialize answered"),
                 ("gradwarden check, cold cache", "before: gradwarden check without a cache"),
                 ("gradwarden check, warm cache", "before: gradwarden check without a cache")]
        w(f"\nafter / before ({args.baseline_rev or args.baseline_src}), wall:\n")
        for now, then in pairs:
            w(f"  {now:48} {by[now].wall * 1000:7.0f} ms vs {by[then].wall * 1000:7.0f} ms: "
              f"{by[now].wall / by[then].wall:.2f}x\n")
    if not ruff:
        w("\n(ruff not found: --ruff PATH adds its figures)\n")
    if args.json:
        Path(args.json).write_text(json.dumps({m.label: {"wall_s": m.wall, "cpu_s": m.cpu, "walls": m.walls}
                                               for m in measures}, indent=2))


if __name__ == "__main__":
    raise SystemExit(main())
