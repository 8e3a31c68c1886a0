"""docs/errors.md, the catalogue of torch's autograd messages, is generated and never stale:
rendering it from the stored texts needs neither torch nor the network; the stored texts are
what the installed torch holds; every text has a family; the rules' torch messages are in it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradwarden.errgen.families import FAMILIES
from gradwarden.errgen.render import family_of, load, render
from gradwarden.rules import all_rules, get_rule
from gradwarden.rules.messages import TORCH_MESSAGES, classify

DOCS = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
REGENERATE = "regenerate it with:  .venv/bin/python -m gradwarden.errgen > docs/errors.md"


def test_docs_errors_md_is_up_to_date():
    assert DOCS.is_file(), f"{DOCS} is missing; {REGENERATE}"
    if DOCS.read_text(encoding="utf-8") != render():
        pytest.fail(f"docs/errors.md is out of date; {REGENERATE}", pytrace=False)


def test_every_collected_text_belongs_to_a_family():
    texts = load()["texts"]
    assert len(texts) > 300
    unclassified = [t for t in texts if family_of(t) is None]
    assert not unclassified, unclassified[:10]


def test_stored_texts_are_those_of_the_installed_torch():
    pytest.importorskip("torch")
    from gradwarden.errgen.collect import collect, torch_version

    data = load()
    assert torch_version().split("+")[0] == data["torch"]
    assert collect() == data["texts"], "re-collect with: python -m gradwarden.errgen --collect > docs/errors.md"


def test_families_are_well_formed():
    keys = [f.key for f in FAMILIES]
    assert len(keys) == len(set(keys))
    for f in FAMILIES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", f.key), f.key
        assert bool(f.codes) != bool(f.reason), f"{f.key}: a family has rules or a reason, not both"
        for c in f.codes:
            assert get_rule(c) is not None, f"{f.key} names unknown rule {c}"
        re.compile(f.match)


def test_each_torch_message_of_the_rules_is_a_family_with_those_rules():
    texts = load()["texts"]
    for m in TORCH_MESSAGES:
        fams = {f.key for f in FAMILIES if set(f.codes) & set(m.codes)}
        assert fams, f"no family for {m.pattern}"
    # and the texts those families hold are what the runtime table recognises
    for text in texts:
        fam = family_of(text)
        if fam is None or not fam.codes or len(text) < 40:
            continue
        m = classify(text, "UserWarning" if "warning" in fam.title else "")
        if m is not None:
            assert set(m.codes) & set(fam.codes), (text, m.codes, fam.codes)


def test_rule_pages_and_catalogue_link_each_other():
    md = DOCS.read_text(encoding="utf-8")
    for f in FAMILIES:
        assert f'<a id="{f.key}"></a>' in md
    for rule in all_rules():
        for f in FAMILIES:
            if rule.code in f.codes:
                assert f"(errors.md#{f.key})" in rule.render()


@pytest.mark.parametrize("pasted,code", [
    ("RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn", "GW701"),
    ("RuntimeError: grad can be implicitly created only for scalar outputs", "GW702"),
    ("RuntimeError: you can only change requires_grad flags of leaf variables.", "GW704"),
    ("ValueError: can't optimize a non-leaf Tensor", "GW706"),
    ("RuntimeError: Can't detach views in-place. Use detach() instead.", "GW712"),
])
def test_a_pasted_message_finds_its_rule(pasted, code):
    """What docs search does: a piece of the pasted message occurs on the page, in the section
    that names the rule."""
    md = DOCS.read_text(encoding="utf-8")
    words = pasted.split(": ", 1)[1]
    piece = max(re.split(r"element \d+ |\. ", words), key=len).strip(". ")
    hits = [m.start() for m in re.finditer(re.escape(piece), md)]
    assert hits, piece
    sections = [md[md.rfind('<a id="', 0, at):md.find('<a id="', at)] for at in hits]
    assert any(code in sec and md.rfind('<a id="', 0, at) >= 0 for sec, at in zip(sections, hits)), piece


def test_the_hover_links_each_rule_to_its_torch_messages_in_the_catalogue():
    """An editor user hovering a diagnostic reaches docs/errors.md, where the message torch
    prints is explained (issue 10: `gradwarden rule` and the hover link to the catalogue)."""
    from gradwarden.lsp.hover import rule_summary

    anchors = set(re.findall(r'<a id="([^"]+)"></a>', (Path(__file__).resolve().parents[1] / "docs" / "errors.md").read_text()))
    linked = 0
    for rule in all_rules():
        text = rule_summary(rule.code, markdown=True) or ""
        for key in re.findall(r"docs/errors\.md#([\w-]+)\)", text):
            assert key in anchors, f"{rule.code}: the hover links #{key}, which docs/errors.md lacks"
            linked += 1
        families = [f for f in FAMILIES if rule.code in f.codes]
        assert bool(families) == ("errors.md#" in text), rule.code
    assert linked >= 15
