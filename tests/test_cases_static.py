"""The static engine on every labelled case, judged exactly as ``shared/tools/score.py`` does.

Per case (``analyze_source`` in-process):

- hazard (``expect: error|silent``): at least one error/warning diagnostic on a cause line
  (``# line: N``) and no error/warning on any other line except the backward line
  (``(backward: M)``);
- ``ok`` (the ``_fixed.py`` twins included): no error/warning diagnostic at all.

Then the real scorer is run over the CLI (``python -m gradwarden check --output-format json``)
and its report is printed (visible with ``-s`` and in the failure report).
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Callable, List, Optional

import pytest

from case_support import REPO_ROOT, Case, case_params, require_case, scorer_path

RECALL_LINE = re.compile(r"^recall (\d+)% \((\d+)/(\d+)\) false_alarms (\d+) cases (\d+)$", re.M)


@pytest.fixture(scope="session")
def analyze() -> Callable:
    """``analyze_source``, imported here (not at module level) so that an unfinished engine
    fails these tests instead of aborting the whole test session at collection."""
    from gradwarden.engine.analyze import analyze_source

    return analyze_source


def _loud(diag) -> bool:
    """score.py's ``loud``: severity error or warning (LSP numbers 1 and 2)."""
    sev = getattr(diag, "severity", 1)
    try:
        return int(sev) in (1, 2)
    except (TypeError, ValueError):
        return str(sev).lower() in ("error", "warning")


def _show(diags) -> str:
    if not diags:
        return "    (none)"
    rows = []
    for d in sorted(diags, key=lambda d: (d.span.row, d.span.column)):
        sev = getattr(d.severity, "name", str(d.severity)).lower()
        rows.append(f"    line {d.span.row}: {d.code} [{sev}] {d.message}")
    return "\n".join(rows)


@pytest.mark.parametrize("case", case_params())
def test_case_static(case: Optional[Case], analyze: Callable) -> None:
    case = require_case(case)
    source = case.path.read_bytes()
    diags = list(analyze(source, str(case.path)))
    loud = [d for d in diags if _loud(d)]
    rows = {d.span.row for d in loud}
    if case.is_hazard:
        hit = bool(rows & case.cause_lines)
        extra = sorted(rows - case.cause_lines - case.neutral_lines)
        problems = []
        if not hit:
            problems.append(f"MISS: no error/warning on a cause line {sorted(case.cause_lines)}")
        if extra:
            problems.append(f"FALSE ALARM on line(s) {extra}")
        neutral = f", backward line {sorted(case.neutral_lines)} neutral" if case.neutral_lines else ""
        if problems:
            pytest.fail(
                f"{case} (family {case.family}, expect {case.expect}{neutral}): "
                + "; ".join(problems)
                + f"\n  error/warning diagnostics:\n{_show(loud)}",
                pytrace=False,
            )
    else:
        if loud:
            pytest.fail(
                f"{case} (family {case.family}, expect ok): FALSE ALARM, an ok file must have "
                f"no error/warning\n  error/warning diagnostics:\n{_show(loud)}",
                pytrace=False,
            )


def test_scorer_over_cli(cases_dir: Path, all_cases: List[Case], capsys) -> None:
    """Runs shared/tools/score.py against the CLI and prints its report (past pytest's
    capture, so that the score is in every test log)."""
    score = scorer_path()
    assert score.is_file(), f"scorer not found at {score} (expected at <cases>/../tools/score.py)"
    cmd = f"{shlex.quote(sys.executable)} -m gradwarden check --output-format json"
    proc = subprocess.run(
        [sys.executable, str(score), str(cases_dir), "--cmd", cmd, "--verbose"],
        cwd=str(REPO_ROOT),
        capture_output=True,
        text=True,
        timeout=900,
    )
    report = proc.stdout + (f"\n--- stderr ---\n{proc.stderr[-3000:]}" if proc.stderr.strip() else "")
    with capsys.disabled():
        print(f"\n=== score.py over `{cmd}` ===\n{report}")
    assert proc.returncode == 0, f"score.py failed (exit {proc.returncode}):\n{report}"
    m = RECALL_LINE.search(proc.stdout)
    assert m, f"score.py printed no `recall R% (h/t) false_alarms F cases N` line:\n{report}"
    assert int(m.group(5)) == len(all_cases), f"score.py saw {m.group(5)} cases, expected {len(all_cases)}"
