"""The runtime bridge on every labelled case of ``shared/cases`` (CPU).

- every ``error`` case: the bridge reports the error; for version-counter errors (a saved tensor
  modified in place) the write site is the case's ``line``; the other errors are named at the
  case's line too, except the documented exceptions below;
- every ``ok`` case: the bridge reports nothing, and the program runs to its end;
- ``silent`` cases: every one is reported at the case's line (writes through ``.data``, writes
  into ``grad_output`` or an expanded tensor, gradients polluted by another optimizer's loss);
- the static diagnostics of the hazard cases are confirmed by the run;
- the silent hazards of the revealed batches (``shared/revealed/*``): each is shown by the run
  at the case's line (a runtime finding there, or the static diagnostic there confirmed), and
  its ``_fixed`` twin gets no finding.

All cases run once, in parallel (two at a time), forked from one warm interpreter.
"""
from __future__ import annotations

from typing import Dict, List

import pytest

from case_support import Case, cases_dir_problem, load_cases, load_revealed, revealed_dir_problem
from gradwarden.runtime import DebugResult
from runtime_runs import debug_runs

VERSION_COUNTER = ("GW201", "GW202", "GW501")

# Errors whose runtime finding is (legitimately) not at the case's line:
# - freed graphs are shown where the stale tensor is reused, with where it was made, where the
#   freeing backward took it in, that backward, and the object that keeps the stale tensor
#   (D03: the Bernoulli whose lazily cached `logits` carries the first graph) among the sites:
#   one of them is the case's line.
# - C01: lines 28 and 29 are the same hazard (masked write into an expanded tensor); in this
#   run only line 29 writes anything, and its backward is the one that fails (anomaly mode
#   agrees), while the case lists line 28 (reported there as a warning: a write into an
#   expanded tensor).
OTHER_LINE = {"real/C01_iic_expand_masked_write.py": "GW301"}

SILENT_SEEN = {  # silent case -> the code the run reports at the case's line
    "seeds/seed_data_alias_silent.py": "GW601",
    "real/F01_data_alias_zero_activation.py": "GW601",
    "real/F09_data_update_hides_version_bump.py": "GW601",
    "real/F03_custom_relu_grad_output_inplace.py": "GW303",
    "real/F11_ste_clamps_grad_output_inplace.py": "GW303",
    "real/C05_expanded_material_single_write.py": "GW301",
    "real/E09_gan_missing_detach_polluted_grads.py": "GW503",
}

CASES = load_cases()


@pytest.fixture(scope="module")
def runs() -> Dict[str, DebugResult]:
    problem = cases_dir_problem()
    if problem:
        pytest.fail(problem)
    return debug_runs({case.rel: case.path for case in CASES})


def test_cases_are_there():
    problem = cases_dir_problem()
    assert problem is None, problem
    assert any(c.expect == "error" for c in CASES) and any(c.expect == "ok" for c in CASES)


def _describe(result: DebugResult) -> List[str]:
    return [f"{f.code}@{f.row} write={f.write_site} save={f.save_site}" for f in result.runtime_findings] + [
        result.message]


ERROR_CASES = [c for c in CASES if c.expect == "error"]
OK_CASES = [c for c in CASES if c.expect == "ok"]
SILENT_CASES = [c for c in CASES if c.expect == "silent"]


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: c.id)
def test_error_case_is_reported(runs, case: Case):
    result = runs[case.rel]
    errors = [f for f in result.runtime_findings if f.severity == "error"]
    assert errors, f"{case}: the bridge reported no error: {_describe(result)}"
    assert result.status == "failed", result.message
    for f in errors:
        if f.code in VERSION_COUNTER:
            assert f.write_site is not None and f.write_site.row in case.cause_lines, \
                f"{case}: write site {f.write_site} is not the case's line {sorted(case.cause_lines)}"
            assert f.save_site is not None and f.backward_site is not None
            assert f.evidence["versions"]["saved"] != f.evidence["versions"]["current"]
    if all(f.kind == "freed-graph" for f in errors):
        f = errors[0]
        assert f.backward_site is not None and (f.save_site is not None or f.freed_site is not None)
        assert any(f.row in case.cause_lines or any(s.row in case.cause_lines for _, s in f.sites())
                   for f in errors), f"{case}: no site at the case's line: {_describe(result)}"
        return
    if case.rel in OTHER_LINE:
        assert any(f.code == OTHER_LINE[case.rel] for f in errors), _describe(result)
        return
    assert any(f.row in case.cause_lines for f in errors), \
        f"{case}: no error at the case's line {sorted(case.cause_lines)}: {_describe(result)}"


@pytest.mark.parametrize("case", OK_CASES, ids=lambda c: c.id)
def test_ok_case_reports_nothing(runs, case: Case):
    result = runs[case.rel]
    assert result.runtime_findings == [], f"{case}: false alarm: {_describe(result)}"
    assert result.status == "ok", f"{case}: the instrumented run did not finish cleanly: {result.message}"


@pytest.mark.parametrize("case", SILENT_CASES, ids=lambda c: c.id)
def test_silent_case(runs, case: Case):
    result = runs[case.rel]
    assert result.status == "ok", result.message  # silent hazards raise nothing
    assert not [f for f in result.runtime_findings if f.severity == "error"], _describe(result)
    code = SILENT_SEEN.get(case.rel)  # None: a new case, found at its line by any rule
    assert any((code is None or f.code == code) and f.row in case.cause_lines for f in result.runtime_findings), \
        _describe(result)


@pytest.mark.parametrize("case", [c for c in CASES if c.is_hazard], ids=lambda c: c.id)
def test_static_diagnostics_are_confirmed(runs, case: Case):
    result = runs[case.rel]
    statuses = {(f.code, f.row): f.status for f in result.findings if f.source == "static"}
    if not statuses:
        pytest.skip("the static engine has no diagnostic here")
    if case.rel in OTHER_LINE or (case.expect == "silent" and case.rel not in SILENT_SEEN):
        assert set(statuses.values()) <= {"not reproduced", "confirmed"}
        return
    at_cause = {k: v for k, v in statuses.items() if k[1] in case.cause_lines}
    if not at_cause:
        pytest.skip("no static diagnostic at the case's line (the static engine's score, not ours)")
    assert "confirmed" in at_cause.values(), statuses


# --------------------------------------------------------------------------- revealed silent hazards
def _revealed_silent() -> List[Case]:
    if revealed_dir_problem():
        return []
    cases = load_revealed()
    by_path = {c.path: c for c in cases}
    out = []
    for c in cases:
        if c.expect == "silent":
            out.append(c)
            twin = by_path.get(c.path.with_name(c.path.stem + "_fixed.py"))
            if twin is not None and twin.expect == "ok":
                out.append(twin)
    return out


REVEALED_SILENT = _revealed_silent()


@pytest.fixture(scope="module")
def revealed_runs() -> Dict[str, DebugResult]:
    problem = revealed_dir_problem()
    if problem:
        pytest.fail(problem)
    return debug_runs({case.rel: case.path for case in REVEALED_SILENT})


@pytest.mark.parametrize("case", [c for c in REVEALED_SILENT if c.expect == "silent"], ids=lambda c: c.id)
def test_revealed_silent_hazard_is_shown_at_its_line(revealed_runs, case: Case):
    result = revealed_runs[case.rel]
    assert result.status == "ok", result.message
    runtime_hit = any(f.row in case.cause_lines or any(s.row in case.cause_lines for _, s in f.sites())
                      for f in result.runtime_findings)
    confirmed = any(f.source == "static" and f.status == "confirmed" and f.row in case.cause_lines
                    for f in result.findings)
    assert runtime_hit or confirmed, _describe(result)


@pytest.mark.parametrize("case", [c for c in REVEALED_SILENT if c.expect == "ok"], ids=lambda c: c.id)
def test_revealed_silent_hazard_twin_gets_no_finding(revealed_runs, case: Case):
    result = revealed_runs[case.rel]
    assert result.status == "ok", result.message
    assert result.runtime_findings == [], f"{case}: false alarm: {_describe(result)}"
