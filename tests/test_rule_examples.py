"""Every rule's VALID/INVALID snippets are its tests (and its documentation)."""
import textwrap

import pytest

from gradwarden.engine.analyze import analyze_source
from gradwarden.engine.diagnostic import Severity
from gradwarden.rules import all_rules

INVALID = [(r.code, i, s) for r in all_rules() for i, s in enumerate(r.INVALID)]
VALID = [(r.code, i, s) for r in all_rules() for i, s in enumerate(r.VALID)]


def _code(snippet: str) -> str:
    return textwrap.dedent(snippet).strip("\n") + "\n"


@pytest.mark.parametrize("code,index,snippet", INVALID, ids=[f"{c}-invalid-{i}" for c, i, _ in INVALID])
def test_invalid_example_is_flagged_on_marked_line(code, index, snippet):
    src = _code(snippet)
    marked = [n for n, line in enumerate(src.splitlines(), 1) if line.rstrip().endswith("# <-")]
    diags = analyze_source(src, "example.py")
    hits = [d for d in diags if d.code == code and (not marked or d.row in marked)]
    assert hits, f"{code} example {index} not flagged on {marked}; got {[(d.row, d.code) for d in diags]}"


@pytest.mark.parametrize("code,index,snippet", VALID, ids=[f"{c}-valid-{i}" for c, i, _ in VALID])
def test_valid_example_is_clean(code, index, snippet):
    diags = [d for d in analyze_source(_code(snippet), "example.py") if d.severity <= Severity.WARNING]
    assert not diags, [(d.row, d.code, d.message) for d in diags]


def test_every_rule_has_examples_and_docs():
    for rule in all_rules():
        if rule.code == "GW001":
            continue
        # a rule only the runtime bridge proves so far has nothing the static analysis flags
        assert rule.INVALID or rule.runtime_only, f"{rule.code} has no INVALID example"
        assert rule.doc() and rule.summary and rule.message and rule.event, rule.code
