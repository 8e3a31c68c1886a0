"""Every example runs after its fix: `gradwarden check --fix --unsafe-fixes` on each example of
examples/ gives a program that runs to completion under torch (exit 0), and so does `--fix`
alone wherever it leaves no error behind (gan_step_order and rnn_hidden_not_detached have only
unsafe fixes: `--fix` leaves them as they are, and they still raise, as reported). The README
tells users to try exactly that. Runs go through tests/torch_runner.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from gradwarden.engine.diagnostic import Severity
from gradwarden.fixes.pipeline import fix_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
MODES = {"fix": False, "unsafe-fixes": True}


@pytest.fixture(scope="module")
def fixed_runs(tmp_path_factory):
    from torch_runner import Job, run_warm

    work = tmp_path_factory.mktemp("fixed-examples")
    jobs, counts = [], {}
    for path in EXAMPLES:
        for mode, unsafe in MODES.items():
            out = fix_text(path.read_text(encoding="utf-8"), str(path), unsafe=unsafe)
            counts[f"{path.stem}-{mode}"] = (out.count, sum(d.severity == Severity.ERROR for d in out.remaining))
            target = work / mode / path.name
            target.parent.mkdir(exist_ok=True)
            target.write_text(out.source, encoding="utf-8")
            jobs.append(Job(f"{path.stem}-{mode}", target, timeout=180))
    outcomes, _ = run_warm(jobs, work)
    return outcomes, counts


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_after_its_fix(path, mode, fixed_runs):
    outcomes, counts = fixed_runs
    key = f"{path.stem}-{mode}"
    run = outcomes[key]
    fixed, errors_left = counts[key]
    if errors_left:
        assert mode == "fix", f"--unsafe-fixes left {errors_left} error(s) in {path.name}"
        assert run.rc != 0, f"{path.name} still has an error finding after --fix, yet runs"
        return
    assert run.rc == 0, f"{path.name} after --{mode} ({fixed} fixes): {run.describe()}"


def test_unsafe_fixes_fix_every_hazard_example(fixed_runs):
    _, counts = fixed_runs
    hazards = [p.stem for p in EXAMPLES if p.stem != "safe_patterns"]
    assert all(counts[f"{h}-unsafe-fixes"][0] >= 1 for h in hazards), counts
