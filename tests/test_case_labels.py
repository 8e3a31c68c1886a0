"""Prove every labelled case's label by running it under torch.

The cases of ``../shared/cases`` and of the revealed batches ``../shared/revealed/*/`` are
standalone programs; each runs as ``python CASE.py`` would (``tests/torch_runner.py``: one
server imports torch once and forks a child per case, one per core; timeout 120 s) and its
outcome must match its ``# expect:`` header (``case_support.label_holds``):

- ``error``  -> exits non-zero with a ``RuntimeError`` in stderr;
- ``silent`` -> exits 0 and prints ``MISMATCH`` (its own gradient check failed);
- ``ok``     -> exits 0 and prints no ``MISMATCH``.

All selected cases start when the first case test runs; each per-case test then waits for its
own result, so ``-k`` selects what is run and failures are reported per file. A case whose
file, torch and runner are unchanged since a recorded proof (``tests/data/proofs.json``,
suite ``case-labels``) that matches its label is not run again. A warm (forked) outcome that
contradicts the label is re-run the reference way, ``sys.executable CASE.py`` in a fresh
process, and judged on that run alone; so is a recorded one. ``GRADWARDEN_CASE_RUN=fresh``
runs every case that way and ignores the recorded proofs.

A wrong label is a finding to report, not a reason to edit the case.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import List, Optional

import pytest

from case_support import (
    KNOWN_EXPECTS,
    WANT,
    Case,
    case_params,
    cases_dir_path,
    label_holds,
    load_revealed,
    read_header,
    require_case,
    revealed_dir_path,
    revealed_dir_problem,
    scorer_path,
)
from torch_runner import Job, Prover, Proofs

CASE_TIMEOUT_S = 120
SUITE = "case-labels"


class CaseRunner:
    """Proves the selected cases' labels, once per session, on first demand."""

    def __init__(self, cases: List[Case], workdir: Path, complete: bool):
        self._cases = {c.rel: c for c in cases}
        self._workdir = workdir
        self.complete = complete
        self.proofs = Proofs(SUITE)
        self._prover: Optional[Prover] = None

    def result(self, case: Case):
        if self._prover is None:
            jobs = [Job(c.rel, c.path, timeout=CASE_TIMEOUT_S) for c in self._cases.values()]
            judges = {c.rel: (lambda o, c=c: label_holds(c.expect, o)) for c in self._cases.values()}
            self._prover = Prover(jobs, judges, self.proofs, self._workdir)
        if case.rel not in self._prover.futures:  # not collected as selected: prove it alone
            one = Prover([Job(case.rel, case.path, timeout=CASE_TIMEOUT_S)],
                         {case.rel: lambda o: label_holds(case.expect, o)}, self.proofs, self._workdir)
            try:
                return one.result(case.rel)
            finally:
                one.close()
        return self._prover.result(case.rel)

    def close(self) -> Optional[str]:
        if self._prover is None:
            return None
        self._prover.close()
        done = all(f.done() and not f.exception() for f in self._prover.futures.values())
        self.proofs.save(complete=self.complete and done)
        return self._prover.summary_line("case labels")


@pytest.fixture(scope="session")
def case_runner(request, tmp_path_factory):
    # Only the cases whose label test is selected in this session are run.
    selected: List[Case] = []
    seen = set()
    for item in request.session.items:
        if getattr(item, "originalname", None) != "test_case_label":
            continue
        case = getattr(item, "callspec", None) and item.callspec.params.get("case")
        if isinstance(case, Case) and case.rel not in seen:
            seen.add(case.rel)
            selected.append(case)
    every = {p.values[0].rel for p in case_params(revealed=True) if isinstance(p.values[0], Case)}
    runner = CaseRunner(selected, tmp_path_factory.mktemp("case_labels"), complete=every <= seen)
    yield runner
    summary = runner.close()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capman = request.config.pluginmanager.get_plugin("capturemanager")
    if summary and reporter is not None:
        if capman is not None:  # past the capture of this teardown
            with capman.global_and_fixture_disabled():
                reporter.write_line("")
                reporter.write_line(summary)
        else:
            reporter.write_line(summary)


@pytest.mark.parametrize("case", case_params(revealed=True))
def test_case_label(case: Optional[Case], case_runner: CaseRunner) -> None:
    case = require_case(case)
    assert case.expect in KNOWN_EXPECTS, f"{case}: unknown `# expect: {case.expect}`"
    res = case_runner.result(case)
    if not label_holds(case.expect, res):
        pytest.fail(
            f"{case} is labelled `expect: {case.expect}` ({WANT[case.expect]}) but torch gave: "
            f"{res.describe()}",
            pytrace=False,
        )


# --- header sanity -------------------------------------------------------------------


def test_cases_directory_present(cases_dir: Path, all_cases: List[Case]) -> None:
    hazards = [c for c in all_cases if c.is_hazard]
    oks = [c for c in all_cases if c.expect == "ok"]
    assert hazards and oks, f"{cases_dir}: expected both hazard and ok cases, got {len(hazards)}/{len(oks)}"


KNOWN_FAMILIES = tuple("ABCDEFGHR")


def test_revealed_directory_present() -> None:
    problem = revealed_dir_problem()
    assert problem is None, problem
    cases = load_revealed()
    assert any(c.is_hazard for c in cases) and any(c.expect == "ok" for c in cases), (
        f"{revealed_dir_path()}: expected both hazard and ok cases")


@pytest.mark.parametrize("case", case_params(revealed=True))
def test_case_header(case: Optional[Case]) -> None:
    case = require_case(case)
    n_lines = len(case.path.read_text(encoding="utf-8", errors="replace").splitlines())
    assert case.expect in KNOWN_EXPECTS, f"{case}: unknown `# expect: {case.meta.get('expect')}`"
    # A..F hazards, G safe look-alikes; gradient flow is H in this project's variants and R in
    # the revealed batches (shared/revealed/cases-2026-11-23)
    assert case.family in KNOWN_FAMILIES, f"{case}: family {case.meta.get('family')!r} is not one of {KNOWN_FAMILIES}"
    if case.is_hazard:
        assert case.cause_lines, f"{case}: a hazard case needs `# line: N` (the line to flag)"
    for n in sorted(case.cause_lines | case.neutral_lines):
        if case.is_hazard:
            assert 1 <= n <= n_lines, f"{case}: `# line:` names line {n}, file has {n_lines}"


def _hazard_in_real(c: Case) -> bool:
    return (c.rel.startswith(("real/", "revealed/")) and c.is_hazard and c.family != "G"
            and not c.rel.endswith("_fixed.py"))


@pytest.mark.parametrize("case", case_params(_hazard_in_real, revealed=True))
def test_fixed_twin_labelled_ok(case: Optional[Case]) -> None:
    """Every hazard ``real/X.py`` has an ``X_fixed.py`` twin (README) labelled ``ok``; that the
    twin really is ok is proven by its own ``test_case_label``."""
    case = require_case(case)
    twin = case.path.with_name(case.path.stem + "_fixed.py")
    assert twin.is_file(), f"{case}: hazard without its `{twin.name}` twin"
    meta = read_header(twin)
    expect = str(meta.get("expect", "")).split()
    assert expect and expect[0].lower() == "ok", (
        f"{twin.name}: the fixed twin of {case} must be labelled `expect: ok`, "
        f"got {meta.get('expect')!r}"
    )


def test_header_parser_matches_scorer(all_cases: List[Case]) -> None:
    """case_support's header parser must agree with shared/tools/score.py's, case by case
    (the revealed batches included)."""
    path = scorer_path()
    assert path.is_file(), f"scorer not found at {path} (expected beside {cases_dir_path()})"
    spec = importlib.util.spec_from_file_location("_gw_score", path)
    assert spec and spec.loader
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)  # type: ignore[union-attr]
    for case in all_cases + load_revealed():
        theirs = score.read_header(case.path)
        assert theirs.get("expect"), case
        assert theirs["expect"].split()[0] == case.expect, case
        assert theirs["lines"] == set(case.cause_lines), case
        assert theirs["neutral"] == set(case.neutral_lines), case
        assert theirs.get("family", "?")[:1] == case.family, case
    their_files = sorted(
        p for p in cases_dir_path().rglob("*.py") if score.read_header(p).get("expect")
    )
    assert their_files == [c.path for c in all_cases]
