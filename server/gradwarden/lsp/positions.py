"""Positions: the engine's 1-based rows and 1-based character columns <-> LSP positions.

LSP lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (as Python's tokenizer counts them; not at
the form feeds and Unicode separators that ``str.splitlines`` also splits at). LSP columns are
counted in the negotiated encoding's code units: UTF-16 (the default), UTF-8 or UTF-32.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from typing import List, Optional, Sequence, Tuple

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"

# Characters that str.splitlines() treats as line boundaries but LSP and Python's tokenizer do not.
_EXTRA_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")


def split_lines(text: str, keepends: bool = False) -> List[str]:
    """Lines as LSP counts them. A final line ending does not start another line (like
    ``str.splitlines``); an empty text has no lines."""
    pieces = text.splitlines(True)
    if _EXTRA_BREAKS.search(text):
        merged: List[str] = []
        buf = ""
        for piece in pieces:
            buf += piece
            if buf.endswith(("\n", "\r")):
                merged.append(buf)
                buf = ""
        if buf:
            merged.append(buf)
        pieces = merged
    if keepends:
        return pieces
    return [_strip_eol(p) for p in pieces]


def lsp_lines(text: str) -> List[str]:
    """Every line of ``text`` as LSP numbers them: n line endings make n + 1 lines (the last
    one empty when the text ends with a line ending); never an empty list."""
    lines = split_lines(text)
    if not text or text.endswith(("\n", "\r")):
        lines.append("")
    return lines


def _strip_eol(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the code units of ``encoding``."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def chars_for_units(line: str, n_units: int, encoding: str) -> int:
    """The character offset in ``line`` reached after ``n_units`` code units (clamped to the
    line; a position inside a character rounds down)."""
    if n_units <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(n_units, len(line))
    count = 0
    for i, ch in enumerate(line):
        if encoding == UTF8:
            step = len(ch.encode("utf-8", "surrogatepass"))
        else:
            step = 2 if ord(ch) > 0xFFFF else 1
        if count + step > n_units:
            return i
        count += step
    return len(line)


class LineIndex:
    """One text snapshot's lines, for converting positions both ways."""

    __slots__ = ("lines", "encoding")

    def __init__(self, text_or_lines, encoding: str = UTF16) -> None:
        if isinstance(text_or_lines, str):
            self.lines: Sequence[str] = lsp_lines(text_or_lines)
        else:
            self.lines = text_or_lines or [""]
        self.encoding = encoding

    def line(self, row0: int) -> str:
        if 0 <= row0 < len(self.lines):
            return self.lines[row0]
        return ""

    # engine (1-based row, 1-based char column) -> LSP (0-based line, code units)
    def to_lsp(self, row: int, column: int) -> Tuple[int, int]:
        line0 = max(row - 1, 0)
        n = len(self.lines)
        if line0 >= n:
            # Past the end: the end of the document (clients clamp, but be exact).
            if n == 0:
                return 0, 0
            return n - 1, units(self.lines[-1], self.encoding)
        text = self.lines[line0]
        char = min(max(column - 1, 0), len(text))
        return line0, units(text[:char], self.encoding)

    # LSP -> engine
    def from_lsp(self, line0: int, character: int) -> Tuple[int, int]:
        if line0 < 0:
            return 1, 1
        if line0 >= len(self.lines):
            if not self.lines:
                return 1, 1
            last = len(self.lines) - 1
            return last + 1, len(self.lines[last]) + 1
        return line0 + 1, chars_for_units(self.lines[line0], character, self.encoding) + 1

    def line_end(self, row: int) -> int:
        """1-based exclusive column of the end of 1-based ``row``."""
        return len(self.line(row - 1)) + 1


def normalize_encoding(name: Optional[str]) -> str:
    if not name:
        return UTF16
    key = str(name).lower()
    if key in (UTF8, "utf8"):
        return UTF8
    if key in (UTF32, "utf32"):
        return UTF32
    return UTF16


_INDEXES: "OrderedDict[Tuple[int, str], Tuple[str, LineIndex]]" = OrderedDict()


def index_for(text: str, encoding: str) -> LineIndex:
    """A LineIndex of ``text``, shared while the same text object is in use (a few kept)."""
    key = (id(text), encoding)
    found = _INDEXES.get(key)
    if found is not None and found[0] is text:
        _INDEXES.move_to_end(key)
        return found[1]
    index = LineIndex(text, encoding)
    _INDEXES[key] = (text, index)
    while len(_INDEXES) > 4:
        _INDEXES.popitem(last=False)
    return index
