"""``textDocument/hover`` as a pure function of what the server already holds: the document's
text, the unit's latest result (its located diagnostics) and, when one was prepared for that
result, its hover table. No worker is asked and no analysis is started on the request path.

- on a ``# noqa`` comment: the rules' documentation;
- on a tensor (name, in-place op, backward call) with a hover table for the current text: its
  version-counter timeline as the engine saw it (``hover_table.lookup``);
- else on a flagged range or one of its related sites: the diagnostic's own timeline (its
  related locations), from the latest diagnostics, carried to the current text;
- else nothing.
"""
from __future__ import annotations

import os
from dataclasses import replace
from typing import Optional, Sequence

from lsprotocol import types as lsp

from gradwarden.engine.diagnostic import Diagnostic, Span
from gradwarden.lsp.convert import to_range
from gradwarden.lsp.documents import Located, Program, cell_text, uri_key
from gradwarden.lsp.hover import (
    Event,
    bare_noqa_text,
    diagnostic_at,
    diagnostic_touching,
    events_of_timeline,
    noqa_codes_at,
    render_diagnostic_hover,
    render_rule_hover,
    render_timeline_hover,
)
from gradwarden.lsp.hover_table import HoverTable, lookup
from gradwarden.lsp.positions import index_for


def answer_hover(*, uri: str, text: str, line: int, character: int, encoding: str, markdown: bool,
                 program: Optional[Program], items: Sequence[Located], table: Optional[HoverTable]
                 ) -> Optional[lsp.Hover]:
    """The hover at (``line``, ``character``) of the document ``uri`` whose text is ``text``.
    ``program``: the program of the latest result (None: no result yet), ``items``: its located
    diagnostics; ``table``: the hover table of that same text, or None."""
    kind = lsp.MarkupKind.Markdown if markdown else lsp.MarkupKind.PlainText
    index = index_for(text, encoding)
    row, col = index.from_lsp(line, character)

    def answer(value: Optional[str], span: Optional[Span]) -> Optional[lsp.Hover]:
        if not value:
            return None
        rng = to_range(span, index) if span is not None else None
        return lsp.Hover(contents=lsp.MarkupContent(kind=kind, value=value), range=rng)

    codes = noqa_codes_at(index.line(row - 1), col)
    if codes is not None:
        return answer((render_rule_hover(codes, markdown) if codes else None) or bare_noqa_text(markdown), None)
    if program is None:
        return None
    prow = program.to_program(uri, row) if program.is_notebook else row
    if prow is None:
        return None
    diags = [it.origin or it.diagnostic for it in items]
    here = [it.origin or it.diagnostic for it in items if uri_key(it.uri) == uri_key(uri)]
    flagged = diagnostic_at(here, prow, col)
    timeline = lookup(table, prow, col) if table is not None else None
    if timeline is not None:
        events = events_of_timeline(timeline)
        diag = _in_cells(program, uri, flagged or _diagnostic_for_events(diags, events))
        if program.is_notebook:
            events = [Event(e.span, e.kind, cell_text(program, e.message, uri), e.version) for e in events]
        value = render_timeline_hover(
            name=timeline.name, events=events, label=_label(program, uri), markdown=markdown, here_row=prow,
            requires_grad=timeline.requires_grad, is_leaf=timeline.is_leaf, note=timeline.note, diagnostic=diag,
        )
        return answer(value, _to_local(program, uri, timeline.span))
    target = flagged or diagnostic_touching(diags, prow, col)
    if target is None:
        return None
    value = render_diagnostic_hover(_in_cells(program, uri, target), _label(program, uri), markdown, here_row=prow)
    return answer(value, _to_local(program, uri, target.span) if target is flagged else None)


def _to_local(program: Program, uri: str, span: Span) -> Optional[Span]:
    """Program span -> this document's rows (None when it is in another cell)."""
    if not program.is_notebook:
        return span
    where = program.to_cell(span.row)
    if where is None or uri_key(where[0].uri) != uri_key(uri):
        return None
    cell = where[0]
    return Span(span.row - cell.start + 1, span.column, span.end_row - cell.start + 1, span.end_column)


def _label(program: Program, uri: str):
    """Program row -> "line 7", or in a notebook "line 2" (this cell) / "cell 3, line 2"."""
    def label(prog_row: int) -> str:
        where = program.to_cell(prog_row) if program.is_notebook else None
        if where is None:
            return f"line {prog_row}"
        cell, crow = where
        if uri_key(cell.uri) == uri_key(uri):
            return f"line {crow}"
        return f"cell {program.cell_number(cell)}, line {crow}"

    return label


def _in_cells(program: Program, uri: str, d: Optional[Diagnostic]) -> Optional[Diagnostic]:
    """The engine's texts speak of program rows; in a notebook, of this cell's rows. A place in
    another file of the project (a finding made through a script that imports this module)
    says which file its line is in."""
    if d is not None and not program.is_notebook and any(
            r.filename and r.filename != d.filename for r in d.related + d.timeline):
        def named(r):
            other = r.filename and r.filename != d.filename
            return replace(r, message=f"{r.message} (in `{os.path.basename(r.filename)}`)") if other else r

        return replace(d, related=tuple(map(named, d.related)), timeline=tuple(map(named, d.timeline)))
    if d is None or not program.is_notebook:
        return d
    return replace(d, message=cell_text(program, d.message, uri),
                   related=tuple(replace(r, message=cell_text(program, r.message, uri)) for r in d.related),
                   timeline=tuple(replace(r, message=cell_text(program, r.message, uri)) for r in d.timeline))


def _diagnostic_for_events(diags: Sequence[Diagnostic], events: Sequence[Event]) -> Optional[Diagnostic]:
    """The diagnostic about the tensor of a timeline: one whose flagged statement is one of the
    timeline's writes (or backward calls)."""
    rows = {e.span.row for e in events if e.kind in ("write", "step", "data_write", "backward")}
    for d in sorted(diags, key=lambda d: int(d.severity)):
        if d.span.row in rows:
            return d
    return None
