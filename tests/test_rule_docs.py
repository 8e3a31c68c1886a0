"""docs/rules.md is generated from the rule catalog and must never go stale."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradwarden.formats import github_anchor, rule_anchor, rules_markdown
from gradwarden.rules import all_rules, get_rule

DOCS = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
REGENERATE = "regenerate it with:  .venv/bin/python -m gradwarden rules --markdown > docs/rules.md"


def test_docs_rules_md_is_up_to_date():
    assert DOCS.is_file(), f"{DOCS} is missing; {REGENERATE}"
    expected = rules_markdown(all_rules())
    actual = DOCS.read_text(encoding="utf-8")
    if actual != expected:
        pytest.fail(f"docs/rules.md is out of date with the rule catalog; {REGENERATE}", pytrace=False)


def test_every_rule_has_a_section_and_an_index_entry():
    md = DOCS.read_text(encoding="utf-8")
    anchors = [github_anchor(line[3:]) for line in md.splitlines() if line.startswith("## ")]
    assert len(anchors) == len(set(anchors)), "duplicate rule headings"
    links = re.findall(r"^\| \[(GW\d+)\]\(#([^)]+)\)", md, re.M)
    assert [code for code, _ in links] == [r.code for r in all_rules()]
    for code, anchor in links:
        assert anchor in anchors
        assert anchor == rule_anchor(get_rule(code))


def test_rule_command_output_is_the_docs_section():
    md = DOCS.read_text(encoding="utf-8")
    for rule in all_rules():
        assert rule.render() in md


def test_catalog_is_well_formed():
    codes = [r.code for r in all_rules()]
    names = [r.name for r in all_rules()]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))
    for r in all_rules():
        assert re.fullmatch(r"GW\d{3}", r.code), r.code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", r.name), r.name
        assert r.summary and "\n" not in r.summary, r.code
        assert r.doc(), f"{r.code} has no docstring"


def test_rule_codes_and_names_are_unique():
    """A code is what `# noqa: GW7xx`, SARIF and the docs' anchors key on: two rules must never
    share one (two branches once both took GW724 for different rules and merged cleanly)."""
    rules = list(all_rules())
    for attr in ("code", "name"):
        seen = {}
        for rule in rules:
            key = getattr(rule, attr)
            assert key not in seen, f"{attr} {key} used by {seen[key].__name__} and {rule.__name__}"
            seen[key] = rule
