"""Diagnostics end to end: the seed cases in every client profile (pull or push as negotiated),
related information or its folded form, codeDescription, severities, positions in UTF-8/16/32,
half-typed code keeping the last good diagnostics, rapid edits."""
from __future__ import annotations

import asyncio
import textwrap

import pytest
from lsprotocol import types as lsp

from lsp_session import codes, eventually, seed_cases, units

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIGMOID = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")
# GW201 on line 5 (y += 1); sigmoid saves on line 4; backward on line 6.


def engine(text: str, name: str):
    from gradwarden.runner import diagnose

    return diagnose(text, name)


async def test_seed_cases(any_session):
    s = any_session
    cases = seed_cases()
    assert cases, "no seed cases found (../shared/cases/seeds)"
    docs = [(case, s.open(s.unique(case.stem), case.read_text())) for case in cases]
    for case, doc in docs:
        want = engine(doc.text, case.name)
        got = await s.diagnostics(doc, lambda ds, n=len(want): len(ds) == n)
        assert sorted(codes(got)) == sorted((d.code, d.span.row) for d in want), case.name
        by_key = {(d.code, d.span.row): d for d in want}
        for g in got:
            w = by_key[(str(g.code), g.range.start.line + 1)]
            assert int(g.severity) == int(w.severity), (case.name, g.code)
            assert g.source == "gradwarden"
            assert g.message.split("\n", 1)[0] == w.message
        s.close(doc)


async def test_related_information_or_folded(session):
    s = session
    doc = s.open(s.unique("related"), SIGMOID)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    assert d.code == "GW201" and d.range.start.line == 4
    assert d.severity == lsp.DiagnosticSeverity.Error
    if s.related_support:
        lines = sorted(r.location.range.start.line + 1 for r in d.related_information)
        assert lines == [4, 6], d.related_information
        assert all(r.location.uri == doc.uri for r in d.related_information)
        assert "\n" not in d.message
    else:
        assert d.related_information is None
        assert "line 4:" in d.message and "line 6:" in d.message, d.message
    section = "diagnostic" if s.pull else "publish_diagnostics"
    if lsp_caps_path(s.caps, section, "code_description_support") or lsp_caps_path(
            s.caps, "publish_diagnostics", "code_description_support"):
        assert d.code_description is not None and d.code_description.href.endswith("#gw201-saved-tensor-modified")
    else:
        assert d.code_description is None
    s.close(doc)


def lsp_caps_path(caps, section: str, name: str):
    from pygls.capabilities import get_capability

    return get_capability(caps, f"text_document.{section}.{name}", False)


async def test_severities(session):
    s = session
    text = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        running = 0
        for step in range(10):
            loss = model(torch.randn(2, 4)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            running += loss
    """)
    doc = s.open(s.unique("severity"), text)
    want = engine(text, "severity.py")
    assert want, "the engine found nothing in the severity sample"
    got = await s.diagnostics(doc, lambda ds: len(ds) == len(want))
    assert sorted((str(g.code), int(g.severity)) for g in got) == sorted((w.code, int(w.severity)) for w in want)
    s.close(doc)


async def test_positions_in_negotiated_encoding(any_session):
    s = any_session
    prefix = 'z = "é😀"; '
    text = SIGMOID.replace("y += 1", prefix + "y += 1")
    doc = s.open(s.unique("unicode"), text)
    [d] = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    want = engine(text, "u.py")[0]
    assert d.range.start.line == 4
    assert d.range.start.character == units(text.splitlines()[4][: want.span.column - 1], s.encoding)
    assert d.range.end.character == units(text.splitlines()[4][: want.span.end_column - 1], s.encoding)
    s.close(doc)


async def test_fix_in_editor_clears(session):
    s = session
    doc = s.open(s.unique("clears"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    s.change(doc, doc.text.replace("y += 1", "y = y + 1"))
    assert await s.diagnostics(doc, lambda ds: not ds) == []
    s.change(doc, doc.text.replace("y = y + 1", "y += 1"))
    got = await s.diagnostics(doc, lambda ds: len(ds) == 1)
    assert codes(got) == [("GW201", 5)]
    s.close(doc)


async def test_half_typed_code_keeps_last_good(any_session):
    s = any_session
    doc = s.open(s.unique("halftyped"), SIGMOID)
    await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 5)])
    # Typing a new statement at the end: it does not parse yet.
    s.change(doc, doc.text + "z = torch.exp(\n")
    got = await s.diagnostics(doc, lambda ds: any(d.code == "GW001" for d in ds))
    assert ("GW201", 5) in codes(got), got
    # A broken line above: the carried diagnostic moves down with its line.
    s.change(doc, "w = [\n" + doc.text)
    got = await s.diagnostics(doc, lambda ds: any(d.code == "GW001" for d in ds) and ("GW201", 6) in codes(ds))
    assert ("GW201", 5) not in codes(got)
    # Editing the flagged line itself while broken: that diagnostic goes (it is being edited).
    s.change(doc, doc.text.replace("y += 1", "y += 2 +"))
    await s.diagnostics(doc, lambda ds: all(d.code == "GW001" for d in ds) and ds)
    # Fixing the syntax: a fresh analysis, no parse error.
    s.change(doc, SIGMOID)
    await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 5)])
    s.close(doc)


async def test_rapid_edits_settle_on_the_last_version(any_session):
    s = any_session
    doc = s.open(s.unique("rapid"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    before = await s.status()
    comment = "# typing a long comment, one character at a time, as fast as the client can send it\n"
    text = doc.text
    for i in range(1, len(comment) + 1):
        s.change(doc, comment[:i] + text)
    assert doc.version == len(comment) + 1
    await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 6)])
    after = await s.status()
    analyses = after["analyses"] - before["analyses"]
    assert analyses < len(comment) / 2, f"{analyses} analyses for {len(comment)} edits: no debounce?"
    s.close(doc)


async def test_non_python_documents_are_ignored(session):
    s = session
    doc = s.open(s.unique("notes", ".md"), "y += 1\n", language_id="markdown")
    if s.pull:
        report = await s.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri)))
        assert list(report.items) == []
    else:
        await asyncio.sleep(0.5)
        assert s.latest_publish(doc.uri) is None
    assert await s.hover(doc, 0, 0) is None
    s.close(doc)


async def test_close_clears_diagnostics(session):
    s = session
    doc = s.open(s.unique("close"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    s.close(doc)
    if s.pull:
        # Pull clients drop a closed document's diagnostics themselves; asked anyway, the
        # server has nothing for it.
        report = await s.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri)))
        assert list(report.items) == []
        return
    await eventually(lambda: s.latest_publish(doc.uri) is not None and not s.latest_publish(doc.uri).diagnostics,
                     "the closed document's diagnostics cleared")
