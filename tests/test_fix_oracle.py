"""The fix oracle: every fix the fixer offers on a correct program leaves it doing what it did.

Correct programs: every ``expect: ok`` file of ``../shared/cases``, of every revealed batch
``../shared/revealed/*`` (the ``_fixed`` twins included) and of ``tests/data/variants``; the
random-program generator's programs that torch runs clean (``tests/progen``, the seeded sets of
``test_progen.py``); and ``tests/data/fix_oracle/``, where every fix kind has correct programs
that look like what it fixes (a fix kind added without one fails ``test_every_fix_kind_has_
correct_programs``).

All of them are copied, ``gradwarden check --fix --unsafe-fixes`` is applied to the copies (the
most a user can let it do), and every program the fixer changed runs before and after, under
torch (``tests/torch_runner.py``: warm, parallel, outcomes of unchanged files reused from
``tests/data/proofs.json``, suite ``fix-oracle``). Required: the same exit status, the same
uncaught exception class, the same printed output (a digest of stdout: where a program prints
its losses, the same text) -- except that a generated program the analysis reports an error or
warning on is not known to be correct (the generator only says torch runs it clean; a warning
says its gradients are silently wrong), so there only the exit status and exception are held.
The ``fix_oracle`` programs must also run clean themselves (they are the fix kinds' proof that
they are correct).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from test_fix_cases import SCRIPT_TIMEOUT, cases_root, gradwarden, header, require_torch, revealed_root
from torch_runner import Job, Outcome, exc_type, prove

REPO = Path(__file__).resolve().parents[1]
ORACLE_DIR = REPO / "tests" / "data" / "fix_oracle"
SUITE = "fix-oracle"


def labelled_correct() -> Dict[str, Path]:
    out: Dict[str, Path] = {}
    for name, root, pattern in (("cases", cases_root(), "**/*.py"), ("revealed", revealed_root(), "*/*.py"),
                                ("variants", REPO / "tests" / "data" / "variants", "**/*.py")):
        if not root.is_dir():
            continue
        for p in sorted(root.glob(pattern)):
            expect = (header(p).get("expect", "").split() or [""])[0].lower()
            if expect == "ok":
                out[f"{name}/{p.relative_to(root).as_posix()}"] = p
    return out


def generated_clean() -> Dict[str, str]:
    """label -> text of the generator's programs that torch runs clean (the sets test_progen.py
    proves against torch)."""
    from progen import FAMILIES, generate_set
    from test_progen import SEED, SET_SIZE

    out: Dict[str, str] = {}
    for family in sorted(FAMILIES):
        for prog in generate_set(SET_SIZE, SEED, family):
            if prog.intent == "clean":
                out[f"progen/{prog.name}.py"] = prog.text
    return out


def oracle_programs() -> Dict[str, Path]:
    return {f"fix_oracle/{p.name}": p for p in sorted(ORACLE_DIR.glob("*.py"))}


def fix_kind_of(path: Path) -> str:
    """The ``# fix-kind: KIND`` header line of a program of tests/data/fix_oracle."""
    for line in path.read_text(encoding="utf-8").splitlines()[:5]:
        key, sep, value = line.lstrip("# ").partition(":")
        if sep and key.strip() == "fix-kind":
            return value.strip()
    return ""


def _same(before: Outcome, after: Outcome, strict: bool) -> Tuple[bool, str]:
    b, a = before.summary, after.summary
    if b.get("rc") != a.get("rc"):
        return False, f"exit status {b.get('rc')} -> {a.get('rc')} ({a.get('exc') or 'no exception'})"
    if exc_type(b) != exc_type(a):
        return False, f"exception {b.get('exc')!r} -> {a.get('exc')!r}"
    if b.get("mismatch") != a.get("mismatch"):
        return False, "MISMATCH printed " + ("after" if a.get("mismatch") else "before") + " the fix only"
    if strict and b.get("out") != a.get("out"):
        return False, "prints something else"
    return True, ""


def test_every_fix_kind_has_correct_programs() -> None:
    """Each realiser kind names correct programs (``# fix-kind: KIND`` in tests/data/fix_oracle)
    that look like what it fixes: the oracle must see them left running."""
    from gradwarden.fixes import REALISERS, _load_realisers

    _load_realisers()
    covered = {fix_kind_of(p) for p in ORACLE_DIR.glob("*.py")}
    missing = sorted(set(REALISERS) - covered)
    assert not missing, f"fix kinds without a correct program in {ORACLE_DIR}: {', '.join(missing)}"
    unknown = sorted(covered - set(REALISERS))
    assert not unknown, f"tests/data/fix_oracle names unknown fix kinds: {', '.join(unknown)}"


def test_fixes_leave_correct_programs_running(tmp_path: Path) -> None:
    require_torch()
    for root in (cases_root(), revealed_root()):
        if not root.is_dir():
            pytest.fail(f"labelled cases not found at {root} (set GRADWARDEN_CASES / GRADWARDEN_REVEALED)",
                        pytrace=False)
    work = tmp_path / "work"
    originals: Dict[str, Path] = {}
    copies: Dict[str, Path] = {}
    for label, src in {**labelled_correct(), **oracle_programs()}.items():
        originals[label] = src
    gen_dir = tmp_path / "generated"
    for label, text in generated_clean().items():
        p = gen_dir / label
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        originals[label] = p
    for label, src in originals.items():
        dst = work / label
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        copies[label] = dst
    n_labelled = sum(1 for lb in originals if not lb.startswith(("progen/", "fix_oracle/")))

    # What the analysis says before the fix: a generated program it finds an error or
    # warning in is not known to be correct (only its exit status is held).
    before = gradwarden("check", "--isolated", "--no-cache", "--no-progress", "--output-format", "json", "progen",
                        cwd=work)
    assert before.returncode in (0, 1), before.stderr
    loud = {Path(d["filename"]).as_posix() for d in json.loads(before.stdout)
            if d["severity"] in ("error", "warning")}

    fixed = gradwarden("check", "--fix", "--unsafe-fixes", "--isolated", "--no-cache", "--no-progress", ".",
                       cwd=work)
    assert fixed.returncode in (0, 1), fixed.stderr
    changed = [lb for lb in originals if copies[lb].read_bytes() != originals[lb].read_bytes()]
    # the fix kinds' own programs run whether changed or not: they must be correct
    to_run = sorted(set(changed) | {lb for lb in originals if lb.startswith("fix_oracle/")})
    jobs: List[Job] = []
    for lb in to_run:
        jobs.append(Job(f"before:{lb}", originals[lb], "script", SCRIPT_TIMEOUT))
        if lb in changed:
            jobs.append(Job(f"after:{lb}", copies[lb], "script", SCRIPT_TIMEOUT))
    # a recorded outcome without the digest of stdout (recorded by another suite) is run again
    results, prover = prove(jobs, lambda o: "out" in o.summary, SUITE, tmp_path)
    print("\n" + prover.summary_line("fix oracle"))

    rows, broken = [], []
    for lb in to_run:
        b = results[f"before:{lb}"]
        if lb.startswith("fix_oracle/") and (b.rc != 0 or b.summary.get("mismatch")):
            broken.append(lb)
            rows.append(f"  NOT CORRECT {lb}: {b.describe()[:300]}")
            continue
        if lb not in changed:
            continue
        strict = not (lb.startswith("progen/") and lb[len("progen/"):] in {Path(x).name for x in loud})
        ok, why = _same(b, results[f"after:{lb}"], strict)
        rows.append(f"  {'SAME   ' if ok else 'CHANGED'} {lb}{'' if strict else ' (exit status only)'} {why}")
        if not ok:
            broken.append(lb)
    report = "\n".join([
        f"fix oracle: {len(originals)} correct programs ({n_labelled} labelled, "
        f"{sum(1 for lb in originals if lb.startswith('progen/'))} generated, "
        f"{sum(1 for lb in originals if lb.startswith('fix_oracle/'))} per fix kind); "
        f"{len(changed)} changed by --fix --unsafe-fixes; {len(broken)} no longer do what they did",
        *rows])
    print(report)
    assert not broken, report
