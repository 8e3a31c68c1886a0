"""Proof by execution for the graph-lifetime and ordering fixes (families D and E) on every
labelled batch, and for every fix on correct programs.

``test_fix_cases.py`` proves the fixer on ``../shared/cases`` against the hand-fixed twins.
Here the same runner checks, over ``../shared/cases``, ``../shared/revealed/*`` and
``tests/data/variants``:

- every family D/E hazard whose file ``gradwarden check --fix --unsafe-fixes`` changes runs
  clean afterwards (no exception, no MISMATCH): a fix offered for a freed graph or a
  missing detach works when it is applied (no retain_graph where a step moved the weights,
  no ``.detach()`` that leaves the error in place);
- every correct program (``expect: ok``: twins and look-alikes) that the fixer changes still
  runs clean: no fix turns a running program into a crashing one.
Runs are recorded like the label proofs (``tests/data/proofs.json``, suite ``fix-lifetime``).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from test_fix_cases import SCRIPT_TIMEOUT, cases_root, describe, failed, gradwarden, header, require_torch
from torch_runner import Job, run_dumps

REPO = Path(__file__).resolve().parents[1]


def revealed_root() -> Path:
    env = os.environ.get("GRADWARDEN_REVEALED")
    return Path(env).expanduser().resolve() if env else REPO.parent / "shared" / "revealed"


def _collect() -> List[Tuple[str, Path, str, str]]:
    """(label, path, family, expect) of every labelled program."""
    out = []
    for name, root in (("cases", cases_root()), ("revealed", revealed_root()),
                       ("variants", REPO / "tests" / "data" / "variants")):
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*.py")):
            meta = header(p)
            expect = (meta.get("expect", "").split() or [""])[0].lower()
            if expect:
                out.append((f"{name}/{p.relative_to(root).as_posix()}", p, meta.get("family", "?")[:1], expect))
    return out


def test_lifetime_fixes_and_fixes_on_correct_programs_run(tmp_path: Path) -> None:
    require_torch()
    programs = [(label, p, fam, exp) for label, p, fam, exp in _collect()
                if exp == "ok" or fam in ("D", "E")]
    assert programs, "no labelled program found (../shared/cases, ../shared/revealed, tests/data/variants)"
    work = tmp_path / "work"
    copies: Dict[str, Path] = {}
    for label, p, _, _ in programs:
        dst = work / label
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, dst)
        copies[label] = dst
    res = gradwarden("check", "--fix", "--unsafe-fixes", "--no-progress", "--isolated", ".", cwd=work)
    assert res.returncode in (0, 1), res.stderr
    changed = [label for label, p, _, _ in programs if copies[label].read_bytes() != p.read_bytes()]
    jobs = [Job(f"fixed:{label}", copies[label], "dump", SCRIPT_TIMEOUT) for label in changed]
    results, _, counts = run_dumps(jobs, [], "fix-lifetime", tmp_path) if jobs else ({}, {}, None)
    if counts is not None:
        print("\n" + counts.line("fix-lifetime runs"))
    info = {label: (fam, exp) for label, _, fam, exp in programs}
    rows, broken = [], []
    for label in changed:
        fam, exp = info[label]
        r = results[f"fixed:{label}"]
        ok = not failed(r)
        rows.append(f"  {'OK    ' if ok else 'BROKEN'} {label:<80} ({fam}, {exp}) {describe(r)}")
        if not ok:
            broken.append(label)
    hazards = sum(1 for _, _, fam, exp in programs if exp != "ok")
    fixed_hazards = sum(1 for label in changed if info[label][1] != "ok" and label not in broken)
    report = "\n".join([
        f"family D/E hazards: {hazards}, fixed by --fix and proven by a clean run: {fixed_hazards}; "
        f"correct programs changed by --fix: {sum(1 for l in changed if info[l][1] == 'ok')}; broken: {len(broken)}",
        *rows])
    print("\n" + report)
    assert not broken, report
