"""The registry of realisers: one function per fix kind (``@realiser("detach")``) turning a
fix suggestion into text edits, and the context each one receives. The fix modules import
this registry; the package (``gradwarden.fixes``) imports the fix modules to fill it."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Dict, List, Optional

from gradwarden.engine.diagnostic import Diagnostic, Fix, Span

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.fixes._doc import Doc, TextEdit

Realiser = Callable[["FixContext"], List["TextEdit"]]
REALISERS: Dict[str, Realiser] = {}


def realiser(kind: str) -> Callable[[Realiser], Realiser]:
    def deco(fn: Realiser) -> Realiser:
        REALISERS[kind] = fn
        return fn

    return deco


class FixContext:
    """What a realiser gets: the parsed source, the diagnostic and the fix."""

    def __init__(self, doc: Doc, diagnostic: Diagnostic, fix: Fix) -> None:
        self.doc = doc
        self.diag = diagnostic
        self.fix = fix

    def param(self, key: str, default: str = "") -> str:
        return self.fix.param(key, default)

    def span_param(self, key: str) -> Optional[Span]:
        return parse_span(self.fix.param(key, ""))

    def related(self, kind: str) -> Optional[Span]:
        for r in self.diag.related:
            if r.kind == kind and r.filename in (None, self.diag.filename):
                return r.span
        return None

    def related_row(self, kind: str) -> Optional[int]:
        s = self.related(kind)
        return s.row if s is not None else None

    @property
    def target(self) -> Span:
        return self.fix.target or self.diag.span


def span_param(span: Optional[Span]) -> str:
    """Encode a span for ``Fix.params`` (``row:col:end_row:end_col``)."""
    if span is None:
        return ""
    return f"{span.row}:{span.column}:{span.end_row}:{span.end_column}"


def parse_span(text: str) -> Optional[Span]:
    m = re.fullmatch(r"(\d+):(\d+):(\d+):(\d+)", text or "")
    if not m:
        return None
    r, c, er, ec = (int(x) for x in m.groups())
    return Span(r, c, er, ec)
