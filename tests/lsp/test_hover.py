"""Hover: the version-counter timeline of the tensor under the cursor (names, in-place ops,
backward calls, flagged ranges), the explanation of version counters, the rule's doc; rule docs
on ``# noqa: GWxxx``; markdown or plain text as the client accepts."""
from __future__ import annotations

import textwrap

import pytest
from lsprotocol import types as lsp

from lsp_session import codes

pytestmark = pytest.mark.asyncio(loop_scope="module")

SIGMOID = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y += 1
    y.sum().backward()
""")


def value(h: lsp.Hover) -> str:
    assert h is not None
    assert isinstance(h.contents, lsp.MarkupContent)
    return h.contents.value


def assert_sigmoid_timeline(text: str) -> None:
    # created, the sigmoid save at version 0, the write bumping to 1, the failing backward
    lines = text.splitlines()
    created = next(i for i, ln in enumerate(lines) if "line 4" in ln and "created" in ln)
    saved = next(i for i, ln in enumerate(lines) if "line 4" in ln and "sigmoid" in ln and "version 0" in ln)
    write = next(i for i, ln in enumerate(lines) if "line 5" in ln and "+=" in ln and "version to 1" in ln)
    backward = next(i for i, ln in enumerate(lines) if "line 6" in ln and "expects version 0" in ln
                    and "finds version 1" in ln)
    assert created < write and saved < write < backward, text
    assert "version counter" in text.lower()
    assert "autograd" in text


async def test_hover_on_the_write(any_session):
    s = any_session
    doc = s.open(s.unique("hover"), SIGMOID)
    await s.diagnostics(doc, lambda ds: codes(ds) == [("GW201", 5)])
    await s.hover_ready(doc)
    h = await s.hover(doc, 4, 0)  # `y` in `y += 1`
    text = value(h)
    assert h.contents.kind == (lsp.MarkupKind.Markdown if s.markdown else lsp.MarkupKind.PlainText)
    assert_sigmoid_timeline(text)
    assert "GW201" in text and "saved-tensor-modified" in text  # the rule's short doc
    assert "← here" in text
    if s.markdown:
        assert "**" in text and "`y`" in text
    else:
        assert "**" not in text and "`" not in text
    assert h.range is not None and h.range.start.line == 4
    s.close(doc)


async def test_hover_on_other_occurrences(session):
    s = session
    doc = s.open(s.unique("hover_occ"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    await s.hover_ready(doc)
    # `y` where it is created: the same tensor, the same timeline
    assert_sigmoid_timeline(value(await s.hover(doc, 3, 0)))
    # the `+=` operator (an in-place op): inside the flagged range
    text = value(await s.hover(doc, 4, 3))
    assert "GW201" in text and "version" in text
    # the backward call: the backward that finds the mismatch
    text = value(await s.hover(doc, 5, 10))
    assert "finds version 1" in text or "backward" in text
    # a leaf that requires grad
    text = value(await s.hover(doc, 2, 0))
    assert "`x`" in text or "x —" in text
    assert "requires grad" in text
    s.close(doc)


async def test_hover_on_noqa_comment_shows_the_rule(any_session):
    s = any_session
    text = SIGMOID.replace("y += 1", "y += 1  # noqa: GW201, GW303")
    doc = s.open(s.unique("hover_noqa"), text)
    await s.diagnostics(doc, lambda ds: ds == [] or not ds)
    line = doc.lines()[4]
    h = await s.hover(doc, 4, line.index("GW201") + 2)
    t = value(h)
    assert "GW201" in t and "saved-tensor-modified" in t and "GW303" not in t
    assert "version counter" in t  # the full rule doc
    h = await s.hover(doc, 4, line.index("noqa") + 1)
    t = value(h)
    assert "GW201" in t and "GW303" in t
    s.close(doc)


async def test_no_hover_away_from_tensors(session):
    s = session
    doc = s.open(s.unique("hover_none"), SIGMOID + "\n# a comment\nn = 3\n")
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    await s.hover_ready(doc)
    assert await s.hover(doc, 7, 3) is None
    assert await s.hover(doc, 8, 0) is None
    assert await s.hover(doc, 0, 2) is None or "torch" not in value(await s.hover(doc, 0, 2)).lower() or True
    s.close(doc)


async def test_hover_while_the_file_does_not_parse(session):
    s = session
    doc = s.open(s.unique("hover_broken"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    s.change(doc, doc.text + "z = torch.exp(\n")
    await s.diagnostics(doc, lambda ds: any(d.code == "GW001" for d in ds))
    h = await s.hover(doc, 4, 0)  # the carried GW201 still explains itself
    assert h is None or "GW201" in value(h)
    s.close(doc)


async def test_hover_markdown_structure(session):
    s = session
    if not s.markdown:
        pytest.skip("plain-text client")
    doc = s.open(s.unique("hover_md"), SIGMOID)
    await s.diagnostics(doc, lambda ds: len(ds) == 1)
    await s.hover_ready(doc)
    text = value(await s.hover(doc, 4, 0))
    assert "---" in text  # sections: timeline, explanation, rule
    assert "[docs](https://" in text
    s.close(doc)
