"""The rules' VALID/INVALID examples are documentation and tests: here they are run under torch.

- every VALID example runs without an exception (a clean snippet that crashes for another
  reason would teach the wrong lesson);
- every INVALID example of an error-severity rule raises the exception the rule documents
  (``Rule.raises``: RuntimeError for autograd's own checks, ValueError for GW706; error =
  "will raise"); warning/information examples are silent hazards and run to the end.

The examples run as programs through ``tests/torch_runner.py`` (one torch import, a forked
child per example, in parallel); an example whose text, torch and runner are unchanged since a
recorded proof that agrees with what it documents is not run again (suite ``rule-examples`` of
``tests/data/proofs.json``).
"""
from __future__ import annotations

import inspect
from typing import Dict, List, Tuple

import pytest

from gradwarden.engine.diagnostic import Severity
from gradwarden.rules.catalog import RULES
from torch_runner import Job, Outcome, exc_type, prove, write_snippets

pytest.importorskip("torch")

SUITE = "rule-examples"
Key = Tuple[str, str, int]


def _examples() -> List[Tuple[str, str, int, Severity, str]]:
    found = []
    for rule in RULES:
        for kind in ("INVALID", "VALID"):
            for i, snippet in enumerate(getattr(rule, kind, ())):
                found.append((rule.code, kind, i, rule.severity, inspect.cleandoc(snippet) + "\n"))
    return found


def _raises() -> Dict[str, str]:
    """The exception class each rule documents torch raising (``Rule.raises``)."""
    return {rule.code: getattr(rule, "raises", "RuntimeError") for rule in RULES}


def _want(code: str, kind: str, severity: Severity) -> str:
    return "ok" if kind == "VALID" or severity is not Severity.ERROR else _raises()[code]


def _got(outcome: Outcome) -> str:
    return "ok" if outcome.rc == 0 else (exc_type(outcome.summary) or "crashed")


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> Dict[Key, Tuple[str, str]]:
    examples = _examples()
    work = tmp_path_factory.mktemp("rule_examples")
    files = write_snippets([(f"{c}-{k}-{i}", text) for c, k, i, _, text in examples], work / "src")
    jobs, judges = [], {}
    for code, kind, i, severity, _ in examples:
        jid = f"{code}-{kind}-{i}"
        jobs.append(Job(jid, files[jid], timeout=120))
        judges[jid] = lambda o, want=_want(code, kind, severity): _got(o) == want
    results, prover = prove(jobs, None, SUITE, work, judges=judges)
    print("\n" + prover.summary_line("rule examples"))
    return {(c, k, i): (_got(results[f"{c}-{k}-{i}"]), results[f"{c}-{k}-{i}"].summary.get("exc", ""))
            for c, k, i, _, _ in examples}


@pytest.mark.parametrize("code,kind,index,severity", [e[:4] for e in _examples()],
                         ids=[f"{e[0]}-{e[1]}-{e[2]}" for e in _examples()])
def test_example_behaves_as_documented(outcomes, code, kind, index, severity):
    outcome, message = outcomes[(code, kind, index)]
    if kind == "VALID" or severity is not Severity.ERROR:
        assert outcome == "ok", f"{code} {kind}[{index}] raised {outcome}: {message}"
    else:
        want = _raises()[code]
        assert outcome == want, f"{code} INVALID[{index}] should raise {want} under torch; got {outcome} {message}"
