"""Every version-counter timeline of one text, recorded once in a worker (``build``, a
background job) and looked up on the server without any worker (``lookup``): what lets hover
answer from stored data instead of running the engine on the request path.

``lookup(table, row, column)`` gives exactly what ``engine.explain.explain.explain_at`` gives for the same
text and position (tests/lsp/test_units.py checks every position of the seed cases).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Optional, Tuple

from gradwarden.engine.diagnostic import Span


@dataclass(frozen=True)
class Entry:
    """An expression the recording saw evaluate to a tensor, and the timeline explain_at would
    give for it."""

    span: Span
    standalone: bool  # seen by a lone analysis of a function (explain_at prefers the module's run)
    order: int  # where the recording saw it first (ties go to the earlier, as in explain_at)
    timeline: int  # index into HoverTable.timelines


@dataclass(frozen=True)
class HoverTable:
    entries: Tuple[Entry, ...]
    timelines: Tuple[Any, ...]  # engine.explain.explain.Timeline

    def __len__(self) -> int:
        return len(self.entries)


EMPTY = HoverTable((), ())


def lookup(table: HoverTable, row: int, column: int) -> Optional[Any]:
    """The timeline of the tensor at ``row``/``column`` (1-based), or None: the innermost
    expression containing the position, preferring what the module's own run saw."""
    best: Optional[Entry] = None
    best_key: Tuple[int, Tuple[int, int], int] = (2, (0, 0), 0)
    for e in table.entries:
        if not e.span.contains(row, column):
            continue
        key = (int(e.standalone), (e.span.end_row - e.span.row, e.span.end_column - e.span.column), e.order)
        if best is None or key < best_key:
            best, best_key = e, key
    return table.timelines[best.timeline] if best is not None else None


def build(text: str, filename: str) -> Optional[HoverTable]:
    """Record ``text`` once and keep every timeline hover may ask for (runs in a worker: the
    engine's recorder; None when this engine has no recorder). A text that does not parse has
    an empty table."""
    import ast

    try:
        from gradwarden.engine.explain import recorder
        from gradwarden.engine.front.source import SourceText
    except ImportError:
        return None
    if not (hasattr(recorder, "RecordingInterpreter") and hasattr(recorder, "_timeline")):
        return None
    from gradwarden.engine.front.source import analysed_in_parts

    if analysed_in_parts(text):
        return EMPTY  # recording needs the whole tree, which a text this large never gets (engine/incremental/parts.py)
    try:
        tree = ast.parse(text, filename=filename)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return EMPTY
    src = SourceText(text)
    interp = recorder.RecordingInterpreter(tree, src, filename)
    try:
        interp.run()
    except RecursionError:
        return EMPTY
    first: Dict[Tuple[Span, bool], int] = {}
    for i, (span, _tid, _counter, _st, standalone) in enumerate(interp.seen):
        first.setdefault((span, bool(standalone)), i)
    timelines: list = []
    by_tensor: Dict[Tuple[int, int, int], Any] = {}
    shared: Dict[Any, int] = {}
    entries = []
    for (span, standalone), i in sorted(first.items(), key=lambda kv: kv[1]):
        _, tid, counter, st, _ = interp.seen[i]
        # The events depend on the tensor (and the state it was seen in), the name on the span:
        # record the events once per tensor, then name them per expression.
        base = by_tensor.get((tid, counter, id(st)))
        if base is None:
            base = by_tensor[(tid, counter, id(st))] = recorder._timeline(interp, src, span, tid, counter, st)
        timeline = replace(base, span=span, name=_name(interp, src, span, tid, st))
        index = shared.get(timeline)
        if index is None:
            index = shared[timeline] = len(timelines)
            timelines.append(timeline)
        entries.append(Entry(span, bool(standalone), i, index))
    return HoverTable(tuple(entries), tuple(timelines))


def _name(interp: Any, src: Any, span: Span, tid: int, st: Any) -> str:
    """The name ``recorder._timeline`` gives: the expression's text on one line, else the tensor's."""
    states = interp.states or [st]
    final = max(states, key=lambda s: s.seq)
    info = final.t.get(tid) or st.t[tid]
    name = src.line(span.row)[span.column - 1: span.end_column - 1] if span.row == span.end_row else info.name
    return name or info.name
