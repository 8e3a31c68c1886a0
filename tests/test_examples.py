"""The bundled examples (what the README's first command lints) say what they do, and do it:
each one's `# expect:` is proven by running it under torch, and gradwarden flags exactly its
`# line:` lines (and nothing in the `ok` one)."""
import subprocess
import sys
from pathlib import Path

import pytest

from case_support import parse_case
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_there_are_examples_of_each_kind():
    expects = {parse_case(p, ROOT).expect for p in EXAMPLES}
    assert {"error", "silent", "ok"} <= expects


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_behaves_as_labelled(path):
    case = parse_case(path, ROOT)
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=180, cwd=ROOT)
    if case.expect == "error":
        assert run.returncode != 0 and "RuntimeError" in run.stderr, run.stderr[-2000:]
    else:
        assert run.returncode == 0, run.stderr[-2000:]
        assert ("MISMATCH" in run.stdout) == (case.expect == "silent"), run.stdout[-2000:]


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_is_flagged_exactly_on_its_lines(path):
    case = parse_case(path, ROOT)
    loud = [d for d in analyze_source(path.read_bytes(), str(path)) if d.severity <= Severity.WARNING]
    rows = {d.row for d in loud}
    if case.expect == "ok":
        assert not loud, [(d.row, d.code, d.message) for d in loud]
    else:
        assert rows & case.cause_lines, f"expected a finding on {sorted(case.cause_lines)}, got {sorted(rows)}"
        assert rows <= case.cause_lines | case.neutral_lines, [(d.row, d.code) for d in loud]
