#!/usr/bin/env python3
"""Instructions of an in-process analysis of every Nth file of a tree, per revision, in one run
(a measurement, not a test; needs valgrind).

    python benchmarks/instr_inproc.py TREE [--every 4] [--baseline-rev REV ...]

One process per revision under callgrind (``PYTHONHASHSEED=0``, bytecode compiled beforehand):
it reads the files, sets the tree as project root hint and analyses every Nth file (sorted) with
``analyze_source`` inside the run scope ``check`` uses (its import answers kept), less a process
that does the same up to the first analysis (start-up, imports, reading). The figure a per-op
change moves, steady on a loaded machine where CPU seconds are not; cost7 and cost8 measured each
commit with it (benchmarks/README.md).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from revisions import cached_server_of  # beside this script (benchmarks/)
import instr_timm

REPO = Path(__file__).resolve().parents[1]

_RUN = r"""
import contextlib, sys
from pathlib import Path
from gradwarden.engine import entry
from gradwarden.engine.analyze import analyze_source, preload
from gradwarden.engine.front import imports
preload()
tree, every, stop = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "stop"
imports.set_root_hints([str(tree)])
srcs = [(str(p), p.read_bytes()) for p in sorted(tree.rglob("*.py")) if p.is_file()][::every]
if not stop:
    with entry.fewer_collections(), getattr(entry, "files_fixed", contextlib.nullcontext)():
        for name, data in srcs:
            analyze_source(data, name)
"""


def measure(server: Path, tree: Path, every: int, work: Path) -> int:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(server / "gradwarden")], check=True,
                   env=instr_timm._env(server))
    py = sys.executable
    full = instr_timm._first(instr_timm._callgrind([py, "-c", _RUN, str(tree), str(every), "run"], server, work))
    base = instr_timm._first(instr_timm._callgrind([py, "-c", _RUN, str(tree), str(every), "stop"], server, work))
    return full - base


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tree", type=Path)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--baseline-rev", action="append", default=[], help="a revision to measure too (repeatable)")
    ap.add_argument("--revs-only", action="store_true", help="measure the revisions given, not the working tree")
    args = ap.parse_args()
    servers = {rev: cached_server_of(rev) for rev in args.baseline_rev}
    if not args.revs_only:
        servers["this tree"] = REPO / "server"
    with tempfile.TemporaryDirectory(prefix="gw-inproc-") as tmp:
        got = {name: measure(server, args.tree, args.every, Path(tmp)) for name, server in servers.items()}
    first = next(iter(got.values()))
    for name, n in got.items():
        print(f"{args.tree.name} every {args.every}th file, {name}: {n / 1e9:.4f} G instructions "
              f"({(n - first) / first * 100:+.2f} % against {next(iter(got))})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
