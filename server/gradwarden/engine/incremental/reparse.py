"""Parsing a document again after an edit, without parsing all of it: the top-level statements
before the edited lines are kept, the ones after it are kept too (parsed again at their new
rows when lines were added or removed, or taken from a small cache of earlier parses), and only
the region from the statement holding the first changed line to the next unchanged statement
is parsed.

The tree is the one ``ast.parse`` gives for the whole text (same nodes, rows, columns):

- the kept statements before the region end before it, and a top-level statement starts at
  column 0, so nothing after them can change how they parse;
- the region is parsed on its own, padded with blank lines to its rows; it must parse to whole
  statements (no open bracket, string or block at its end), so the unchanged statement after
  it starts afresh at column 0, as it does in the whole text;
- anything else (the region does not parse, a ``from __future__`` import in it, an edit near
  the top, statements sharing a row across the region's edges) parses the whole text, which
  also gives the syntax error to report.

``tests/lsp/test_incremental.py`` compares the trees with ``ast.parse`` over random edits.
"""
from __future__ import annotations

import ast
import bisect
from collections import OrderedDict
from typing import List, Optional, Sequence, Tuple

from gradwarden.engine.front.body import first_row

MAX_PIECES_KEPT = 2048  # parsed runs of statements, by (first row, text)


class Reparser:
    """The last tree of one document, and parses of its statements by place and text."""

    def __init__(self) -> None:
        self._lines: Optional[List[str]] = None
        self._body: List[ast.stmt] = []
        self._pieces: "OrderedDict[Tuple[int, str], List[ast.stmt]]" = OrderedDict()
        self.last_full = True  # the last parse read the whole text (for tests and stats)

    def parse(self, text: str, lines: Sequence[str], filename: str) -> ast.Module:
        """``ast.parse(text, filename)`` (raises what it raises). ``lines``: the text's rows as
        Python counts them, each with its line ending."""
        tree = self._incremental(list(lines), filename)
        self.last_full = tree is None
        if tree is None:
            tree = ast.parse(text, filename=filename, type_comments=False)
        self._lines, self._body = list(lines), list(tree.body)
        return tree

    def _incremental(self, new: List[str], filename: str) -> Optional[ast.Module]:
        old, body = self._lines, self._body
        if old is None or not body:
            return None
        if new == old:
            return ast.Module(body=list(body), type_ignores=[])
        p = 0  # common leading rows
        limit = min(len(old), len(new))
        while p < limit and old[p] == new[p]:
            p += 1
        q = 0  # common trailing rows (not overlapping the leading ones)
        while q < limit - p and old[-1 - q] == new[-1 - q]:
            q += 1
        first_changed = p + 1  # 1-based rows
        last_changed_old = len(old) - q  # may be < first_changed (lines only added)
        delta = len(new) - len(old)
        starts = [first_row(s) for s in body]
        k = bisect.bisect_right(starts, first_changed) - 1  # the statement holding the first change
        if k < 0:
            return None
        while k > 0 and starts[k - 1] == starts[k]:
            k -= 1
        region_start = starts[k]
        if region_start <= 2 or (k > 0 and _end(body[k - 1]) >= region_start):
            return None  # near the top (coding cookie, docstring), or a row shared with the statement above
        m = bisect.bisect_right(starts, max(last_changed_old, first_changed - 1))  # first unchanged after
        if m < len(body) and (starts[m] <= _end(body[m - 1]) if m > k else False):
            return None  # shares a row with the statement before it
        region_end_old = starts[m] - 1 if m < len(body) else len(old)
        region_end_new = region_end_old + delta
        if region_end_new < region_start - 1:
            return None
        region = "".join(new[region_start - 1:region_end_new])
        if "__future__" in region:
            return None
        parsed = _parse_at(region, region_start, filename)
        if parsed is None:
            return None
        suffix = body[m:]
        if delta and suffix:
            suffix = self._moved(suffix, starts[m:], delta, old, filename)
            if suffix is None:
                return None
        return ast.Module(body=list(body[:k]) + parsed + suffix, type_ignores=[])

    def _moved(self, suffix: List[ast.stmt], starts: List[int], delta: int, old: List[str],
               filename: str) -> Optional[List[ast.stmt]]:
        """The statements after the region, at rows moved by ``delta``: each run of statements
        sharing rows parsed again at its new place (or taken from an earlier parse of it)."""
        out: List[ast.stmt] = []
        i = 0
        while i < len(suffix):
            j, end = i + 1, _end(suffix[i])
            while j < len(suffix) and starts[j] <= end:  # statements sharing a row
                end = max(end, _end(suffix[j]))
                j += 1
            text = "".join(old[starts[i] - 1:end])
            key = (starts[i] + delta, text)
            piece = self._pieces.get(key)
            if piece is None:
                piece = _parse_at(text, starts[i] + delta, filename)
                if piece is None or len(piece) != j - i:
                    return None
                self._pieces[key] = piece
                while len(self._pieces) > MAX_PIECES_KEPT:
                    self._pieces.popitem(last=False)
            else:
                self._pieces.move_to_end(key)
            out += piece
            i = j
        return out


def _end(stmt: ast.stmt) -> int:
    return getattr(stmt, "end_lineno", None) or stmt.lineno


def _parse_at(text: str, row: int, filename: str) -> Optional[List[ast.stmt]]:
    """The statements of ``text`` as if it began at ``row`` (None: it does not parse alone)."""
    if text[:1] in (" ", "\t", "\f"):
        return None  # an indented first row belongs to the statement above
    try:
        return list(ast.parse("\n" * (row - 1) + text, filename=filename, type_comments=False).body)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
