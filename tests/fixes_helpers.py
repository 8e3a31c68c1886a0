"""Helpers for the fix unit tests: build a Diagnostic/Fix on a snippet by naming the text it
points at, realise the fix, and check the result compiles."""
from __future__ import annotations

import re
import textwrap
from typing import Iterable, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Fix, Related, Severity, Span
from gradwarden.fixes import edits_for, span_param

_EOL = re.compile(r"\r\n|\r|\n")


def src(text: str, *, crlf: bool = False, tabs: bool = False) -> str:
    """Dedented snippet; optionally CRLF line ends and tab indentation (4 spaces -> tab)."""
    out = textwrap.dedent(text).lstrip("\n")
    if tabs:
        out = "\n".join(_tabify(line) for line in out.split("\n"))
    if crlf:
        out = out.replace("\n", "\r\n")
    return out


def _tabify(line: str) -> str:
    n = len(line) - len(line.lstrip(" "))
    return "\t" * (n // 4) + " " * (n % 4) + line[n:]


def pos(text: str, offset: int) -> Tuple[int, int]:
    row, start = 1, 0
    for m in _EOL.finditer(text):
        if m.end() > offset:
            break
        row, start = row + 1, m.end()
    return row, offset - start + 1


def span_of(text: str, needle: str, nth: int = 0) -> Span:
    """The span of the ``nth`` occurrence of ``needle`` (1-based rows/char columns)."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    r, c = pos(text, at)
    er, ec = pos(text, at + len(needle))
    return Span(r, c, er, ec)


def fix(kind: str, *, safe: bool = True, target: Optional[Span] = None, **params: object) -> Fix:
    ps = []
    for k, v in params.items():
        if isinstance(v, Span):
            v = span_param(v)
        ps.append((k, str(v)))
    return Fix(kind, f"test {kind}", safe=safe, preferred=True, target=target, params=tuple(ps))


def diag(code: str, span: Span, fixes: Sequence[Fix] = (), related: Iterable[Tuple[str, Span, str]] = (),
         filename: str = "t.py") -> Diagnostic:
    rel = tuple(Related(s, msg, kind) for kind, s, msg in related)
    return Diagnostic(code, "test", Severity.ERROR, filename, span, rel, tuple(fixes), rule="test")


def apply_edits(text: str, edits) -> str:
    from gradwarden.fixes._doc import Doc

    doc = Doc(text)
    items = sorted(((doc.offset(e.span.row, e.span.column), doc.offset(e.span.end_row, e.span.end_column),
                     e.content) for e in edits), reverse=True)
    for s, e, c in items:
        text = text[:s] + c + text[e:]
    return text


def realise(text: str, d: Diagnostic, f: Optional[Fix] = None) -> Optional[str]:
    f = f or d.fixes[0]
    edits = edits_for(text, d, f)
    if edits is None:
        return None
    new = apply_edits(text, edits)
    compile(new, "t.py", "exec", dont_inherit=True)
    return new


def must(text: str, d: Diagnostic, f: Optional[Fix] = None) -> str:
    new = realise(text, d, f)
    assert new is not None, f"fix {(f or d.fixes[0]).kind} not realised"
    assert new != text
    return new


def analyze(text: str) -> List[Diagnostic]:
    from gradwarden.engine.analyze import analyze_source

    return analyze_source(text, "t.py")


def fix_all(text: str, unsafe: bool = True) -> str:
    from gradwarden.fixes.apply import fix_until_stable

    return fix_until_stable(text, analyze, unsafe=unsafe).source
