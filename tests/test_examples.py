"""The bundled examples (what the README's first command lints) say what they do, and do it:
each one's `# expect:` is proven by running it under torch, and gradwarden flags exactly its
`# line:` lines (and nothing in the `ok` one). The runs go through tests/torch_runner.py (one
torch import, forked children, recorded proofs in tests/data/proofs.json, suite `examples`)."""
from pathlib import Path

import pytest

from case_support import WANT, label_holds, parse_case
from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_there_are_examples_of_each_kind():
    expects = {parse_case(p, ROOT).expect for p in EXAMPLES}
    assert {"error", "silent", "ok"} <= expects


@pytest.fixture(scope="module")
def example_runs(tmp_path_factory):
    from torch_runner import Job, prove

    cases = [parse_case(p, ROOT) for p in EXAMPLES]
    jobs = [Job(c.rel, c.path, timeout=180) for c in cases]
    judges = {c.rel: (lambda o, c=c: label_holds(c.expect, o)) for c in cases}
    results, _ = prove(jobs, None, "examples", tmp_path_factory.mktemp("examples"), judges=judges)
    return results


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_behaves_as_labelled(path, example_runs):
    case = parse_case(path, ROOT)
    run = example_runs[case.rel]
    assert label_holds(case.expect, run), f"{case}: want {WANT[case.expect]}, got {run.describe()}"


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
