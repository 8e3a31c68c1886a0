"""Random programs checked against torch (tests/progen): the engine must agree with torch on
"raises" vs "runs clean" for every program of a fixed seeded set.

Per family (``lifetime`` = issue 9's vocabulary, ``flow`` = issue 10's), SET_SIZE distinct
programs from a fixed seed run under torch through ``tests/torch_runner.py`` (one torch import,
forked children, one per core) and through the engine (``analyze_source``). torch's outcome
of a program whose content, torch and runner are unchanged is reused from
``tests/data/proofs.json`` (suites ``progen-lifetime`` and ``progen-flow``), so a re-run costs
the engine's time only.

- the generator: deterministic, both clean look-alikes and hazards in every family, a planted
  line for every hazard, and its intent agrees with what torch does (torch is the truth: a
  program whose intended outcome torch contradicts is a generator bug);
- the engine: 0 disagreements on error vs clean (a program that raises gets an
  error-severity diagnostic; a program that runs clean gets none) and no crash.

The ``flow`` family (issue 10's gradient-flow rules, GW7xx) has the same bar: 0 disagreements.

The ``silent`` family (issue 24: silent gradients, the run as oracle) is generated and checked
against torch like the others (the generator tests below), but the engine's agreement on it is
asserted only for the families of ``progen.ENGINE_CHECKED``: the engine work of issue 24 adds
``silent`` there. Until then ``test_engine_on_unchecked_families`` runs the engine on every
program (no crash allowed) and prints its table and disagreements (``-s``).
``python -m pytest tests/test_progen.py -s`` prints the agreement tables.
"""
from __future__ import annotations

from typing import Dict

import pytest

from progen import ENGINE_CHECKED, FAMILIES, generate, generate_set
from progen.oracle import Report, describe, disagreement_kinds, run, smallest_per_pattern

pytest.importorskip("torch")

SEED = 20261123
SET_SIZE = 400  # per family: under a minute of torch on 2 quiet cores, recorded afterwards
SUITE = "progen"  # sections progen-lifetime, progen-flow and progen-silent of tests/data/proofs.json

_reports: Dict[str, Report] = {}


def report_for(family: str, tmp_path_factory) -> Report:
    if family not in _reports:
        programs = generate_set(SET_SIZE, SEED, family)
        work = tmp_path_factory.mktemp(f"progen-{family}")
        # one section per family, rewritten with exactly this set (stale programs pruned)
        _reports[family] = run(programs, work, suite=f"{SUITE}-{family}", complete=True)
        print(f"\n=== progen {family}: {len(programs)} programs (torch: {_reports[family].ran} run, "
              f"{_reports[family].reused} recorded) ===\n{_reports[family].table()}\n"
              f"{_reports[family].class_table()}\n{_reports[family].patterns()}")
    return _reports[family]


def _explain(rep: Report, kinds) -> str:
    bad = [r for r in rep.records if r.verdict in kinds]
    small = smallest_per_pattern(bad)
    return "\n".join([f"{len(bad)} programs; the smallest per pattern:"] + [f"  {describe(r)}" for r in small] +
                     ["", "smallest program:", min(bad, key=lambda r: len(r.program.text)).program.text if bad else ""])


# --- the generator --------------------------------------------------------------------------


def test_generation_is_deterministic_and_varied():
    for family in FAMILIES:
        a = generate_set(60, SEED, family)
        b = generate_set(60, SEED, family)
        assert [p.text for p in a] == [p.text for p in b]
        clean = sum(p.intent == "clean" for p in a)
        assert 0.25 * len(a) <= clean <= 0.75 * len(a), f"{family}: {clean}/{len(a)} clean look-alikes"
        assert {p.frame for p in a} == {"script", "function", "method"}
        assert len({p.pattern for p in a}) >= 8, f"{family}: only {sorted({p.pattern for p in a})}"
        for p in a:
            compile(p.text, p.name, "exec")
            if p.intent != "clean":
                assert p.cause_lines, f"{p.name}: a hazard without a planted line"
    assert generate(5, "lifetime").text != generate(6, "lifetime").text


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generator_intent_matches_torch(family, tmp_path_factory):
    """torch is the truth: every program does what the generator meant it to do, and no program
    fails for a reason outside the vocabulary (a NameError, a time-out)."""
    rep = report_for(family, tmp_path_factory)
    wrong = rep.intent_wrong
    assert not wrong, "the generator's intent is contradicted by torch:\n" + "\n".join(
        f"  meant {r.program.intent}: {describe(r)}" for r in wrong[:20])


# --- the engine -----------------------------------------------------------------------------


@pytest.mark.parametrize("family", sorted(ENGINE_CHECKED))
def test_engine_agrees_with_torch(family, tmp_path_factory):
    """0 disagreements under the family's definition (``oracle.disagreement_kinds``: a missed raise
    or a false error; for ``silent`` also a silent hazard with nothing loud or a false warning)."""
    rep = report_for(family, tmp_path_factory)
    crashes = rep.by_verdict("engine-crash")
    assert not crashes, "the engine crashed:\n" + "\n".join(describe(r) for r in crashes[:10])
    kinds = disagreement_kinds(family)
    if rep.by_verdict(*kinds):
        pytest.fail(f"engine vs torch ({family}):\n{rep.table()}\n{rep.class_table()}\n{_explain(rep, kinds)}",
                    pytrace=False)


def test_engine_checked_families_are_known():
    """The switch names families the generator has (a typo would silently check nothing)."""
    assert set(ENGINE_CHECKED) <= set(FAMILIES) and {"lifetime", "flow"} <= set(ENGINE_CHECKED)


@pytest.mark.parametrize("family", [f for f in sorted(FAMILIES) if f not in ENGINE_CHECKED])
def test_engine_on_unchecked_families(family, tmp_path_factory):
    """A family whose engine work has not landed (not in ``progen.ENGINE_CHECKED``): the engine
    analyses every program without crashing; its disagreements with torch are printed, not
    asserted (run with -s). Adding the family to ENGINE_CHECKED makes them a failure."""
    rep = report_for(family, tmp_path_factory)
    crashes = rep.by_verdict("engine-crash")
    assert not crashes, "the engine crashed:\n" + "\n".join(describe(r) for r in crashes[:10])
    kinds = disagreement_kinds(family)
    bad = rep.by_verdict(*kinds)
    print(f"\n=== engine vs torch ({family}, not yet checked): {len(bad)} disagreements ===\n{rep.class_table()}\n"
          + (_explain(rep, kinds) if bad else ""))


def test_flow_family_false_alarms(tmp_path_factory):
    """Precision holds today for the flow vocabulary even without its rules: no clean program
    of it gets an error diagnostic (only misses are expected)."""
    rep = report_for("flow", tmp_path_factory)
    if rep.by_verdict("false-error", "engine-crash"):
        pytest.fail(_explain(rep, ("false-error", "engine-crash")), pytrace=False)


def test_the_oracle_sees_each_kind_of_outcome(tmp_path_factory):
    """The set exercises what it claims: hazards of several torch classes and clean programs in
    each family (a generator that only wrote clean programs would pass the agreement tests)."""
    for family in sorted(FAMILIES):
        rep = report_for(family, tmp_path_factory)
        classes = {r.torch.cls for r in rep.records}
        assert "clean" in classes
        assert len([c for c in classes if c != "clean"]) >= 5, f"{family}: {sorted(classes)}"
