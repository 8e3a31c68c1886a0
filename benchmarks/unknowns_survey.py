#!/usr/bin/env python3
"""What the interpreter leaves unknown on real repositories, by expression kind.

Each file of a cached real tree (``benchmarks/real_trees.py`` downloads them; ``GRADWARDEN_TREES_CACHE``
names the cache) is analysed as ``gradwarden check TREE`` analyses it (the tree as the project root),
with ``Expressions.eval`` wrapped for the run of this script only: every expression node whose value
comes back unknown is counted once per file, by its kind (a call split by the form of its callee:
``name()``, ``obj.method()``; an attribute by whether its object was itself unknown). The lint path
is untouched (the wrapper exists only in this process).

usage: unknowns_survey.py [--trees timm,transformers,...] [--max-files N] [--top 15] [--calls 15]
prints, per tree and summed, the kinds with the most unknown nodes, and the callee names (the last
dotted part) of the unknown calls.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))

DEFAULT_TREES = "timm,transformers,ultralytics,kornia,monai,torchvision"


def _cache() -> Path:
    env = os.environ.get("GRADWARDEN_TREES_CACHE")
    return Path(env) if env else HERE / ".cache" / "trees"


def _tree_dir(name: str) -> Path:
    found = sorted(p for p in _cache().glob(f"{name}-*") if p.is_dir())
    if not found:
        raise SystemExit(f"{name}: not in {_cache()} (run benchmarks/real_trees.py --setup-only)")
    return found[-1]


def _callee(node: ast.Call) -> Tuple[str, str]:
    f = node.func
    if isinstance(f, ast.Name):
        return "Call name()", f.id
    if isinstance(f, ast.Attribute):
        return "Call obj.method()", f.attr
    return f"Call {type(f).__name__}(...)()", type(f).__name__


def survey(trees: List[str], max_files: int) -> Tuple[Dict[str, Counter], Dict[str, Counter], Dict[str, int], Dict[str, Counter]]:
    from gradwarden.engine.analyze import analyze_source
    from gradwarden.engine.front.imports import set_root_hints
    from gradwarden.engine.interp.expressions import Expressions
    from gradwarden.engine.state.model import UnknownV

    kinds: Dict[str, Counter] = {}
    calls: Dict[str, Counter] = {}
    files: Dict[str, int] = {}
    seen: set = set()
    current: List[Counter] = [Counter(), Counter(), Counter()]
    known: Dict[int, str] = {}  # node -> the class (and kind) of the value it had, when known
    details: Dict[str, Counter] = {}
    original = Expressions.eval

    def counted(self, node, st):  # type: ignore[no-untyped-def]
        value = original(self, node, st)
        if node is not None and value.__class__ is not UnknownV:
            known[id(node)] = value.__class__.__name__ + (f":{value.kind}" if hasattr(value, "kind") else "")
        if node is not None and value.__class__ is UnknownV and id(node) not in seen:
            seen.add(id(node))
            # a node whose operand was unknown already only carries that unknown on: the kinds
            # worth fixing are the nodes whose own parts were known ("from known parts")
            if isinstance(node, ast.Call):
                kind, name = _callee(node)
                inner = node.func.value if isinstance(node.func, ast.Attribute) else None
                if inner is not None and id(inner) in seen:
                    kind += " on an unknown object"
                else:
                    current[1][name] += 1
            elif isinstance(node, ast.Name):
                kind = "Name bound to an unknown value" if node.id in st.frames[st.fi] else \
                    "Name not bound (outside the project, or a global not run)"
            elif isinstance(node, (ast.Attribute, ast.Subscript)):
                kind = type(node).__name__ + (" of an unknown object" if id(node.value) in seen else
                                              " of a known object")
                if id(node.value) in known:
                    what = node.attr if isinstance(node, ast.Attribute) else type(node.slice).__name__
                    current[2][f"{type(node).__name__} {known[id(node.value)]} .{what}"] += 1
            else:
                kind = type(node).__name__
            current[0][kind] += 1
        return value

    Expressions.eval = counted  # type: ignore[method-assign]
    try:
        for name in trees:
            root = _tree_dir(name)
            set_root_hints([str(root)])
            paths = sorted(p for p in root.rglob("*.py") if "test" not in p.name)[:max_files]
            current[0], current[1], current[2] = Counter(), Counter(), Counter()
            for path in paths:
                seen.clear()
                known.clear()
                try:
                    analyze_source(path.read_bytes(), str(path))
                except Exception as exc:  # a survey: one file's failure is reported, not fatal
                    print(f"  {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            kinds[name], calls[name], files[name] = current[0], current[1], len(paths)
            details[name] = current[2]
    finally:
        Expressions.eval = original  # type: ignore[method-assign]
    return kinds, calls, files, details


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trees", default=DEFAULT_TREES)
    ap.add_argument("--max-files", type=int, default=200, help="files per tree (sorted by path)")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args()
    t0 = time.perf_counter()
    kinds, calls, files, details = survey([t.strip() for t in args.trees.split(",") if t.strip()], args.max_files)
    total, total_calls = Counter(), Counter()
    for name in kinds:
        total.update(kinds[name])
        total_calls.update(calls[name])
        top = ", ".join(f"{k} {n}" for k, n in kinds[name].most_common(5))
        print(f"{name}: {files[name]} files, {sum(kinds[name].values())} unknown nodes; {top}")
    print(f"\n| kind of expression left unknown | nodes ({sum(files.values())} files) |\n|---|---|")
    for k, n in total.most_common(args.top):
        print(f"| {k} | {n} |")
    print(f"\n| callee of an unknown call | calls |\n|---|---|")
    for k, n in total_calls.most_common(args.calls):
        print(f"| `{k}` | {n} |")
    total_details = Counter()
    for name in details:
        total_details.update(details[name])
    print(f"\n| attribute / subscript of a known value left unknown (value class, attribute) | nodes |\n|---|---|")
    for k, n in total_details.most_common(args.calls):
        print(f"| `{k}` | {n} |")
    print(f"\n({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
