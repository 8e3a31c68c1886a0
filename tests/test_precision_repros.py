"""The reproductions behind the `real` verdicts of benchmarks/PRECISION.md
(``benchmarks/precision/repro/``): each runs under torch and shows its hazard (exit 0 and
"REPRODUCED" on stdout); every reproduction the verdicts file names exists, and every one that
exists is named there."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPRO = ROOT / "benchmarks" / "precision" / "repro"
KNOWN = ROOT / "benchmarks" / "real_trees_known.txt"
SUITE = "precision-repros"  # its section of tests/data/proofs.json


def _named() -> set:
    names = set()
    for line in KNOWN.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.search(r"\srepro=(\S+)", line)
        if m:
            names.add(m.group(1))
    return names


def test_every_real_verdict_has_a_reproduction_and_every_reproduction_is_used() -> None:
    files = {p.name for p in REPRO.glob("*.py")}
    named = _named()
    assert named <= files, f"named but missing: {sorted(named - files)}"
    assert files <= named, f"not named by any verdict: {sorted(files - named)}"
    for line in KNOWN.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 3 and not line.startswith("#") and parts[2] == "real":
            assert "repro=" in line, f"a real verdict without a reproduction: {line[:120]}"


def test_reproductions_show_their_hazard(tmp_path) -> None:
    pytest.importorskip("torch")
    from torch_runner import Job, prove

    jobs = [Job(p.name, p, timeout=120) for p in sorted(REPRO.glob("*.py"))]
    assert len(jobs) >= 10

    def judge(outcome) -> bool:
        return outcome.summary.get("rc") == 0

    results, prover = prove(jobs, judge, SUITE, tmp_path)
    bad = [f"{j.id}: {results[j.id].describe()}" for j in jobs if not judge(results[j.id])]
    print(prover.summary_line("precision reproductions"))
    assert not bad, "\n".join(bad)
