#!/usr/bin/env python3
"""Same answers: ``gradwarden check`` of the working tree against a baseline revision, corpus by
corpus, with identical JSON required (a proof for refactors that must change no finding).

    python benchmarks/same_answers.py --baseline-rev REV [--corpora NAME,...] [--trees timm,torchvision,peft]
                                      [--progen-n N] [--progen-seed S] [--jobs N] [--show N]

Each corpus is a folder of ``.py`` files checked with ``gradwarden check --no-cache
--output-format json FOLDER`` twice, by the same Python interpreter: once with the working
tree's ``server/`` first on ``PYTHONPATH``, once with the baseline's (``git worktree add
--detach`` of ``REV`` into a temporary folder, removed at the end). Both runs see the same
files at the same paths, so their JSON must be byte for byte the same. The corpora:

- ``cases`` — ``../shared/cases`` (the labelled programs);
- ``revealed/<batch>`` — every batch under ``../shared/revealed``;
- ``variants`` — ``tests/data/variants``; ``examples`` — ``examples/``;
- ``projects`` — the multi-file projects of ``tests/data/projects``, each copied into a folder of
  its own (as benchmarks/score_projects.py runs them: imports resolved inside the project);
- ``precision`` — ``tests/data/precision`` (the library patterns reduced to programs) and
  ``precision-repro`` — ``benchmarks/precision/repro`` (the reproductions of real findings);
- ``rule-examples`` — every rule's VALID and INVALID snippets, one file each (as
  tests/test_rule_examples.py analyses them);
- ``progen`` — the random-program generator's seeded set (tests/progen, ``--progen-n``
  programs of every family from ``--progen-seed``; the same set benchmarks/bench_progen.py
  runs under torch);
- ``tree/<name>`` — real libraries (benchmarks/real_trees.py downloads them into
  ``benchmarks/.cache/trees/``).

Printed: one line per corpus (files, diagnostics, identical / DIFFERENT, CPU seconds of each
run), and for a corpus that differs its first ``--show`` differences (file, then the
diagnostics only one side has). The baseline's outputs are kept in
``benchmarks/.cache/same_answers/`` keyed by the revision's commit and the corpus's content,
so that a later run against the same baseline re-runs the working tree only. Exit status 0
when every corpus is identical, 1 otherwise, 2 on a usage error.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SHARED = REPO.parent / "shared"
CACHE = HERE / ".cache" / "same_answers"
DEFAULT_TREES = ("timm", "torchvision", "peft")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- corpora
def _write_rule_examples(into: Path) -> None:
    """Each rule's VALID/INVALID snippets as files, dedented as tests/test_rule_examples.py does."""
    sys.path.insert(0, str(REPO / "server"))
    from gradwarden.rules import all_rules

    for rule in all_rules():
        for kind in ("INVALID", "VALID"):
            for i, snippet in enumerate(getattr(rule, kind)):
                text = textwrap.dedent(snippet).strip("\n") + "\n"
                (into / f"{rule.code}_{kind.lower()}_{i}.py").write_text(text, encoding="utf-8")


def _write_progen(into: Path, n: int, seed: int) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from progen import generate_set

    for k, program in enumerate(generate_set(n, seed, "all")):
        (into / f"p{k:05d}_{program.family}_{program.pattern}.py").write_text(program.text, encoding="utf-8")


def _copy_projects(into: Path) -> None:
    """Each project of tests/data/projects in a folder of its own under ``into``, outside the
    repository, so that its imports resolve inside the project (its root: no marker above it)."""
    for project in sorted((REPO / "tests" / "data" / "projects").iterdir()):
        if project.is_dir() and (project / "case.toml").exists():
            shutil.copytree(project, into / project.name, ignore=shutil.ignore_patterns("__pycache__"))


def corpora(args: argparse.Namespace, scratch: Path) -> List[Tuple[str, Path]]:
    """(name, folder) of every corpus asked for, in a stable order."""
    out: List[Tuple[str, Path]] = []
    if (SHARED / "cases").is_dir():
        out.append(("cases", SHARED / "cases"))
    for batch in sorted((SHARED / "revealed").glob("*")) if (SHARED / "revealed").is_dir() else ():
        if batch.is_dir():
            out.append((f"revealed/{batch.name}", batch))
    out.append(("variants", REPO / "tests" / "data" / "variants"))
    out.append(("examples", REPO / "examples"))
    if (REPO / "tests" / "data" / "projects").is_dir():
        projects = scratch / "projects"
        projects.mkdir()
        _copy_projects(projects)
        out.append(("projects", projects))
    for name, folder in (("precision", REPO / "tests" / "data" / "precision"),
                         ("precision-repro", REPO / "benchmarks" / "precision" / "repro")):
        if folder.is_dir():
            out.append((name, folder))
    rules = scratch / "rule-examples"
    rules.mkdir()
    _write_rule_examples(rules)
    out.append(("rule-examples", rules))
    if args.progen_n > 0:
        progen = scratch / "progen"
        progen.mkdir()
        _write_progen(progen, args.progen_n, args.progen_seed)
        out.append(("progen", progen))
    if args.trees:
        sys.path.insert(0, str(HERE))
        import real_trees

        for name in args.trees.split(","):
            name = name.strip()
            if name not in real_trees.TREES:
                raise SystemExit(f"unknown tree {name!r} (known: {', '.join(real_trees.TREES)})")
            out.append((f"tree/{name}", real_trees.fetch(name)))
    if args.corpora:
        wanted = [w.strip() for w in args.corpora.split(",")]
        out = [(n, p) for n, p in out if any(n == w or n.startswith(w + "/") for w in wanted)]
    return out


def digest(folder: Path) -> str:
    """The content of a corpus: every .py file's path (relative) and bytes."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*.py")):
        h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------- running
def check(server: Path, folder: Path, jobs: Optional[int]) -> Tuple[str, float, str]:
    """(JSON output, CPU seconds of the check and its workers, the gradwarden it imported)."""
    # PYTHONSAFEPATH: the folder checked is the working directory, and ``python -c`` would put it
    # first on sys.path, where a library's own ``logging.py`` (accelerate) shadows the stdlib's
    env = dict(os.environ, PYTHONPATH=str(server), PYTHONHASHSEED="0", PYTHONSAFEPATH="1")
    cmd = [sys.executable, "-c", "import gradwarden, sys; print(gradwarden.__file__, file=sys.stderr); "
           "from gradwarden.cli import main; sys.exit(main(sys.argv[1:]))",
           "check", "--no-cache", "--output-format", "json", str(folder)]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, cwd=str(folder), env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"check of {folder} with {server} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    imported = proc.stderr.splitlines()[0] if proc.stderr else "?"
    if not imported.startswith(str(server)):
        raise RuntimeError(f"the run meant for {server} imported {imported}")
    return proc.stdout, cpu, imported


def by_file(output: str) -> Dict[str, List[str]]:
    """filename -> its diagnostics (each as canonical JSON), in output order."""
    out: Dict[str, List[str]] = {}
    for d in json.loads(output or "[]"):
        out.setdefault(d.get("filename", "?"), []).append(json.dumps(d, sort_keys=True))
    return out


def differences(before: str, after: str, show: int) -> List[str]:
    a, b = by_file(before), by_file(after)
    lines: List[str] = []
    for name in sorted(set(a) | set(b)):
        if a.get(name) == b.get(name):
            continue
        if len(lines) >= show * 4:
            lines.append("  ...")
            break
        lines.append(f"  {name}:")
        only_a = [d for d in a.get(name, []) if d not in b.get(name, [])]
        only_b = [d for d in b.get(name, []) if d not in a.get(name, [])]
        for d in only_a[:2]:
            lines.append(f"    - baseline only: {_short(d)}")
        for d in only_b[:2]:
            lines.append(f"    + working tree only: {_short(d)}")
        if not only_a and not only_b:
            lines.append("    (same diagnostics, another order)")
    return lines


def _short(d: str) -> str:
    x = json.loads(d)
    loc = x.get("location", {})
    return f"{loc.get('row')}:{loc.get('column')} {x.get('code')} {x.get('message', '')[:110]}"


def baseline_tree(rev: str, into: Path) -> Tuple[Path, str]:
    sha = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "worktree", "add", "--detach", str(into), sha], cwd=REPO, check=True,
                   capture_output=True, text=True)
    return into, sha


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-rev", required=True, help="git revision to compare with (e.g. main)")
    ap.add_argument("--corpora", default="", help="only these corpora (names or prefixes, comma-separated)")
    ap.add_argument("--trees", default=",".join(DEFAULT_TREES),
                    help=f"real trees to check (default {','.join(DEFAULT_TREES)}; empty: none)")
    ap.add_argument("--progen-n", type=int, default=2000,
                    help="random programs (0: none; 2000 of seed 1: the set benchmarks/bench_progen.py runs)")
    ap.add_argument("--progen-seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=None, help="check's --jobs (default: its own)")
    ap.add_argument("--show", type=int, default=5, help="differences shown per corpus")
    ap.add_argument("--no-baseline-cache", action="store_true", help="re-run the baseline even if kept")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="gw-same-") as tmp:
        scratch = Path(tmp)
        base_dir, sha = baseline_tree(args.baseline_rev, scratch / "baseline")
        try:
            return _compare(args, scratch, base_dir / "server", sha)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_dir)], cwd=REPO,
                           capture_output=True, text=True)


def _compare(args: argparse.Namespace, scratch: Path, base_server: Path, sha: str) -> int:
    work_server = REPO / "server"
    found = corpora(args, scratch)
    print(f"baseline {args.baseline_rev} = {sha[:12]}; working tree {REPO}; python {sys.executable}")
    header = f"{'corpus':<34} {'files':>6} {'diags':>7}  {'result':<10} {'cpu before':>10} {'cpu after':>10}"
    print(header)
    print("-" * len(header))
    all_same = True
    details: List[str] = []
    totals = [0.0, 0.0]
    for name, folder in found:
        files = sum(1 for _ in folder.rglob("*.py"))
        key = CACHE / sha / (name.replace("/", "__") + "-" + digest(folder) + ".json")
        started = time.monotonic()
        kept_mark = " "
        if key.exists() and not args.no_baseline_cache:
            kept = json.loads(key.read_text())
            before, cpu_before, kept_mark = kept["output"], kept["cpu"], "*"
        else:
            before, cpu_before, _ = check(base_server, folder, args.jobs)
            key.parent.mkdir(parents=True, exist_ok=True)
            key.write_text(json.dumps({"output": before, "cpu": cpu_before}))
        after, cpu_after, _ = check(work_server, folder, args.jobs)
        same = before == after
        all_same &= same
        totals[0] += cpu_before
        totals[1] += cpu_after
        n_diags = len(json.loads(after or "[]"))
        print(f"{name:<34} {files:>6} {n_diags:>7}  {'identical' if same else 'DIFFERENT':<10} "
              f"{cpu_before:>9.1f}s{kept_mark}{cpu_after:>9.1f}s", flush=True)
        if not same:
            details.append(f"{name}:")
            details.extend(differences(before, after, args.show))
        log(f"  ({name}: {time.monotonic() - started:.0f}s)")
    print("-" * len(header))
    print(f"{'all':<34} {'':>6} {'':>7}  {'identical' if all_same else 'DIFFERENT':<10} "
          f"{totals[0]:>9.1f}s {totals[1]:>9.1f}s")
    print("(* the baseline's output and CPU time kept from an earlier run against the same commit)")
    if details:
        print()
        print("first differences (baseline only / working tree only):")
        print("\n".join(details))
    return 0 if all_same else 1


if __name__ == "__main__":
    sys.exit(main())
