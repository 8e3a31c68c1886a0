"""Documents as the analysis sees them: one text file, or one notebook (its code cells joined
in order into one program), plus the mapping back to each cell, and the row mapping that
carries the last good diagnostics across an edit that does not parse.

Pure data and functions (no pygls), so the unit tests use them directly.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Callable, Dict, List, Optional, Sequence, Tuple
from urllib.parse import unquote, urlparse

from gradwarden.engine.diagnostic import Diagnostic, Edit, Related, Span
from gradwarden.lsp.positions import split_lines


# --------------------------------------------------------------------------- URIs
def uri_to_path(uri: str) -> Optional[str]:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if parsed.netloc and parsed.netloc not in ("", "localhost"):
        path = f"//{parsed.netloc}{path}"
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):  # pragma: no cover - Windows
        path = path[1:]
    return path


def display_name(uri: str) -> str:
    """The filename the engine and the settings see: the path for files, else the URI."""
    return uri_to_path(uri) or uri


def uri_key(uri: str) -> str:
    """Normalised form for lookups (clients may percent-encode differently; pygls unquotes)."""
    return unquote(uri)


# --------------------------------------------------------------------------- notebooks
@dataclass(frozen=True)
class CellSpan:
    """Where one code cell sits in the notebook's program."""

    uri: str
    index: int  # position among the notebook's cells (markdown ones included), 0-based
    start: int  # 1-based program row of the cell's first line
    rows: int  # rows the cell occupies (at least 1)

    @property
    def end(self) -> int:  # last program row, inclusive
        return self.start + self.rows - 1


@dataclass(frozen=True)
class Program:
    """The text the engine analyses for one unit, and where each piece came from."""

    text: str
    cells: Tuple[CellSpan, ...] = ()  # empty for a plain file

    @property
    def is_notebook(self) -> bool:
        return bool(self.cells)

    def cell_at(self, row: int) -> Optional[CellSpan]:
        lo, hi = 0, len(self.cells) - 1
        while lo <= hi:
            mid = (lo + hi) // 2
            cell = self.cells[mid]
            if row < cell.start:
                hi = mid - 1
            elif row > cell.end:
                lo = mid + 1
            else:
                return cell
        return None

    def cell(self, uri: str) -> Optional[CellSpan]:
        key = uri_key(uri)
        for cell in self.cells:
            if uri_key(cell.uri) == key:
                return cell
        return None

    def to_cell(self, row: int) -> Optional[Tuple[CellSpan, int]]:
        """Program row -> (cell, 1-based row in the cell)."""
        cell = self.cell_at(row)
        if cell is None:
            return None
        return cell, row - cell.start + 1

    def to_program(self, uri: str, row: int) -> Optional[int]:
        cell = self.cell(uri)
        if cell is None:
            return None
        return cell.start + min(max(row, 1), cell.rows) - 1

    def cell_number(self, cell: CellSpan) -> int:
        """1-based number of a cell among the code cells (what a user calls "cell 3")."""
        return self.cells.index(cell) + 1


_CELL_MAGIC = re.compile(r"^\s*%%")
_LINE_MAGIC = re.compile(r"^(\s*)(?:[%!]|\?\??\s*\w)")
_ASSIGN_MAGIC = re.compile(r"^(\s*[\w.,\s\[\]()*]+=\s*)[%!]")
_HELP_SUFFIX = re.compile(r"^(\s*)[\w.]+\?\??\s*$")


def mask_magics(source: str) -> str:
    """IPython syntax made harmless, rows and columns kept: a ``%%cell`` magic blanks the whole
    cell; ``%line``/``!shell``/``obj?`` lines become ``pass``; ``x = !cmd`` becomes
    ``x = None``."""
    lines = split_lines(source, keepends=True)
    if not lines:
        return source
    first = next((ln for ln in lines if ln.strip()), "")
    if _CELL_MAGIC.match(first):
        return "".join(_eol(ln) for ln in lines)
    out: List[str] = []
    for ln in lines:
        body, eol = _split_eol(ln)
        m = _ASSIGN_MAGIC.match(body)
        if m:
            out.append(m.group(1) + "None" + eol)
            continue
        m = _LINE_MAGIC.match(body) or _HELP_SUFFIX.match(body)
        if m:
            out.append(m.group(1) + "pass" + eol)
            continue
        out.append(ln)
    return "".join(out)


def _split_eol(line: str) -> Tuple[str, str]:
    if line.endswith("\r\n"):
        return line[:-2], "\r\n"
    if line.endswith(("\n", "\r")):
        return line[:-1], line[-1]
    return line, ""


def _eol(line: str) -> str:
    return _split_eol(line)[1]


def build_notebook_program(cells: Sequence[Tuple[str, str, bool]]) -> Program:
    """``cells``: (uri, text, is_python_code) in notebook order. Code cells are joined, each
    ending with a newline, magics masked; other cells are skipped."""
    parts: List[str] = []
    spans: List[CellSpan] = []
    row = 1
    for index, (uri, text, is_code) in enumerate(cells):
        if not is_code:
            continue
        body = mask_magics(text)
        n = len(split_lines(body))
        if not body.endswith(("\n", "\r")):
            body += "\n"
        rows = max(n, 1)
        if n == 0:
            body = "\n"
        spans.append(CellSpan(uri=uri, index=index, start=row, rows=rows))
        parts.append(body)
        row += rows
    return Program(text="".join(parts), cells=tuple(spans))


# --------------------------------------------------------------------------- diagnostics per cell
_LINE_REF = re.compile(r"\b(?P<word>[Ll]ine) (?P<row>\d+)\b")


def cell_text(program: Program, text: str, home_uri: Optional[str]) -> str:
    """A message of the engine (which counts the rows of the joined program) in the words of
    the notebook: "line 9" becomes "line 2" when that row is in the cell the message is shown
    in (``home_uri``), else "cell 3, line 2". Plain files are left alone."""
    if not program.is_notebook or not text:
        return text
    home = uri_key(home_uri) if home_uri else None

    def one(m: "re.Match[str]") -> str:
        where = program.to_cell(int(m.group("row")))
        if where is None:
            return m.group(0)
        cell, row = where
        if home is not None and uri_key(cell.uri) == home:
            return f"{m.group('word')} {row}"
        prefix = "Cell" if m.group("word") == "Line" else "cell"
        return f"{prefix} {program.cell_number(cell)}, line {row}"

    return _LINE_REF.sub(one, text)


def _span_in_cell(span: Span, cell: CellSpan) -> Span:
    """A program span clipped to one cell, in the cell's rows."""
    row = span.row - cell.start + 1
    end_row = span.end_row - cell.start + 1
    end_column = span.end_column
    if end_row > cell.rows:
        end_row, end_column = cell.rows, 10**6  # to the end of the cell's last line
    return Span(row, span.column, end_row, end_column)


@dataclass(frozen=True)
class Located:
    """A diagnostic placed in one document (a cell, or the file itself), in that document's
    rows; ``related`` entries carry their own document URI."""

    uri: str
    diagnostic: Diagnostic  # spans already in the document's rows
    related_uris: Tuple[str, ...] = ()  # one per diagnostic.related entry
    carried: bool = False  # from the last analysis that parsed (the current text does not)
    origin: Optional[Diagnostic] = None  # the engine's diagnostic (program rows), for fixes


def locate(program: Program, uri: str, diags: Sequence[Diagnostic], carried: bool = False) -> List[Located]:
    """Place engine diagnostics (program rows) in documents."""
    out: List[Located] = []
    if not program.is_notebook:
        for d in diags:
            rel = tuple(_related_uri(r, d, uri) for r in d.related)
            out.append(Located(uri, d, rel, carried, d))
        return out
    for d in diags:
        found = program.to_cell(d.span.row)
        if found is None:
            continue
        cell, _ = found
        related: List[Related] = []
        related_uris: List[str] = []
        for r in d.related:
            where = program.to_cell(r.span.row)
            if where is None:
                continue
            rcell, _ = where
            related.append(replace(r, span=_span_in_cell(r.span, rcell),
                                   message=cell_text(program, r.message, rcell.uri)))
            related_uris.append(rcell.uri)
        timeline = []
        for t in d.timeline:
            where = program.to_cell(t.span.row)
            if where is not None:
                timeline.append(replace(t, span=_span_in_cell(t.span, where[0]),
                                        message=cell_text(program, t.message, where[0].uri)))
        local = replace(d, span=_span_in_cell(d.span, cell), related=tuple(related), timeline=tuple(timeline),
                        message=cell_text(program, d.message, cell.uri))
        out.append(Located(cell.uri, local, tuple(related_uris), carried, d))
    return out


def _related_uri(r: Related, d: Diagnostic, uri: str) -> str:
    """A related location in another file (the runtime bridge reports some) gets that file's URI."""
    if r.filename and r.filename != d.filename and os.path.isabs(r.filename):
        from pathlib import Path

        return Path(r.filename).as_uri()
    return uri


def edits_to_cells(program: Program, edits: Sequence[Edit]) -> Optional[Dict[str, List[Edit]]]:
    """Program edits -> per-cell edits; None when an edit crosses a cell boundary."""
    out: Dict[str, List[Edit]] = {}
    for e in edits:
        where = program.to_cell(e.span.row)
        if where is None:
            # An insertion just after the last row (end of the program) belongs to the last cell.
            if program.cells and e.span.row == program.cells[-1].end + 1 and e.span.row == e.span.end_row:
                cell = program.cells[-1]
                out.setdefault(cell.uri, []).append(Edit(Span(cell.rows + 1, 1, cell.rows + 1, 1), e.content))
                continue
            return None
        cell, _ = where
        if e.span.end_row > cell.end and not (e.span.end_row == cell.end + 1 and e.span.end_column == 1):
            return None
        out.setdefault(cell.uri, []).append(Edit(_span_in_cell(e.span, cell), e.content))
    return out


# --------------------------------------------------------------------------- carrying results across edits
RowMap = Callable[[int], Optional[int]]


def row_mapping(old_text: str, new_text: str) -> RowMap:
    """Map rows of ``old_text`` to ``new_text``: rows in the common prefix stay, rows in the
    common suffix shift by the difference in length, rows in between (edited) map to None."""
    old = split_lines(old_text)
    new = split_lines(new_text)
    n = min(len(old), len(new))
    prefix = 0
    while prefix < n and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < n - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    delta = len(new) - len(old)
    old_len = len(old)

    def mapping(row: int) -> Optional[int]:
        if row <= prefix:
            return row
        if row > old_len - suffix:
            return row + delta
        return None

    return mapping


def carry_diagnostics(diags: Sequence[Diagnostic], mapping: RowMap) -> List[Diagnostic]:
    """The diagnostics whose rows all survive the edit, moved to their new rows (their related
    locations too; a related location in the edited region is dropped)."""
    out: List[Diagnostic] = []
    for d in diags:
        row, end_row = mapping(d.span.row), mapping(d.span.end_row)
        if row is None or end_row is None:
            continue
        related = []
        for r in d.related:
            rr, rend = mapping(r.span.row), mapping(r.span.end_row)
            if rr is not None and rend is not None:
                related.append(replace(r, span=replace(r.span, row=rr, end_row=rend)))
        timeline = []
        for t in d.timeline:
            tr, tend = mapping(t.span.row), mapping(t.span.end_row)
            if tr is not None and tend is not None:
                timeline.append(replace(t, span=replace(t.span, row=tr, end_row=tend)))
        out.append(replace(d, span=replace(d.span, row=row, end_row=end_row), related=tuple(related),
                           timeline=tuple(timeline), fixes=()))
    return out


@dataclass
class Snapshot:
    """One analysable state of a unit (a file or a notebook)."""

    key: str  # the unit: the file's URI, or the notebook's URI
    uri: str  # as the client spelled it (the file's or the notebook's)
    generation: int  # server-side counter, increases with every change of the unit
    program: Program
    filename: str  # what the engine and the settings see
    versions: Dict[str, Optional[int]] = field(default_factory=dict)  # document URI -> client version
    documents: Tuple[str, ...] = ()  # the URIs that receive diagnostics (the file, or every code cell)
    texts: Dict[str, str] = field(default_factory=dict)  # document URI -> its text (cells unmasked)

    @property
    def text(self) -> str:
        return self.program.text
