"""Moving diagnostics to new rows: after lines were added or removed above the code they are
about, a cached diagnostic is still right once every row in it follows its line (spans,
related locations, timelines, fixes, and "line N" in messages). Used by the incremental
analysis (``incremental.py``, ``unitcache.py``)."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, List, Optional, Sequence

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Related, Span

_LINE_REF = re.compile(r"\b([Ll]ines?) (\d+)\b")


def move_diagnostics(diags: Sequence[Diagnostic], rows: Dict[int, int]) -> Optional[List[Diagnostic]]:
    """The diagnostics with every row moved (spans, related, timeline, fixes, and "line N" in
    messages); None when one points at a row the map does not know (then re-analyse)."""
    if all(old == new for old, new in rows.items()):
        return list(diags)
    try:
        return [move_one(d, rows) for d in diags]
    except KeyError:
        return None


def _span(s: Span, rows: Dict[int, int]) -> Span:
    return Span(rows[s.row], s.column, rows[s.end_row] if s.end_row in rows else rows[s.row] + s.end_row - s.row,
                s.end_column)


def _message(text: str, rows: Dict[int, int]) -> str:
    return _LINE_REF.sub(lambda m: f"{m.group(1)} {rows[int(m.group(2))]}", text)


def _related(r: Related, rows: Dict[int, int]) -> Related:
    return replace(r, span=_span(r.span, rows), message=_message(r.message, rows))


_SPAN_PARAM = re.compile(r"^(\d+):(\d+):(\d+):(\d+)$")  # a span in a fix's params ("row:col:row:col")


def _param(key: str, value: str, rows: Dict[int, int]) -> str:
    if key.endswith("_row") and value.isdigit():
        return str(rows[int(value)])
    m = _SPAN_PARAM.match(value)
    if m is None:
        return value
    moved = _span(Span(*(int(g) for g in m.groups())), rows)
    return f"{moved.row}:{moved.column}:{moved.end_row}:{moved.end_column}"


def _fix(f: Fix, rows: Dict[int, int]) -> Fix:
    return replace(f, target=_span(f.target, rows) if f.target is not None else None,
                   edits=tuple(Edit(_span(e.span, rows), e.content) for e in f.edits),
                   params=tuple((k, _param(k, v, rows)) for k, v in f.params))


def move_one(d: Diagnostic, rows: Dict[int, int]) -> Diagnostic:
    return replace(d, span=_span(d.span, rows), message=_message(d.message, rows),
                   related=tuple(_related(r, rows) for r in d.related),
                   timeline=tuple(_related(r, rows) for r in d.timeline),
                   fixes=tuple(_fix(f, rows) for f in d.fixes))


