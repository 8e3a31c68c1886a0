"""Jupyter notebooks in the command line (``gradwarden check nb.ipynb``), ruff's conventions.

- The code cells, in order, are one program (the language server joins them the same way:
  :func:`gradwarden.lsp.documents.build_notebook_program`); IPython magics, shell escapes and
  ``obj?`` help lines are neutralised with their rows kept; markdown/raw cells are skipped, and
  so is a notebook whose kernel is not Python.
- Diagnostics stay in program rows inside the pipeline (noqa, selection and the fixer all
  work on the program); :class:`CellMap` turns a program row into ``(cell number, row in the
  cell)`` when they are printed. Cells are numbered from 1 among *all* the notebook's cells,
  as ruff does, so "cell 3" is the third cell you see.
- ``--fix`` fixes the program, splits it back into its cells and writes only the changed
  cells' ``source`` into the notebook JSON: outputs, metadata, ids, key order and the JSON
  layout (indent, escaping, final newline) stay as they were.

Pure functions over bytes and text (no I/O except :func:`read_cell_map`).
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Span
from gradwarden.lsp.documents import Program, build_notebook_program, mask_magics
from gradwarden.lsp.positions import split_lines

NOTEBOOK_SUFFIX = ".ipynb"
PARSE_ERROR_CODE = "GW001"
# A comment line between cells while fixing: fixes move and wrap statements, and these lines
# say afterwards where each cell ends (libcst keeps comments where they are).
CELL_BOUNDARY = "# gradwarden: cell boundary (do not edit)"

Analyze = Callable[[str], List[Diagnostic]]


class NotebookError(ValueError):
    """The bytes are not a notebook we can read (not JSON, no ``cells`` list...)."""


def is_notebook(filename: str) -> bool:
    return filename.lower().endswith(NOTEBOOK_SUFFIX)


# --------------------------------------------------------------------------- reading
@dataclass(frozen=True)
class JsonStyle:
    """How the file was written, so that writing it back changes nothing else."""

    indent: Optional[int] = 1  # nbformat writes indent=1
    ensure_ascii: bool = False
    final_newline: bool = True


@dataclass
class Notebook:
    data: Dict[str, Any]  # the parsed JSON (dict order = file order)
    style: JsonStyle
    code_cells: List[int] = field(default_factory=list)  # indices (0-based, all cells) of the Python code cells
    sources: Dict[int, str] = field(default_factory=dict)  # cell index -> its source text

    @property
    def program(self) -> Program:
        cells = self.data.get("cells", [])
        return build_notebook_program(
            [(str(i), self.sources.get(i, ""), i in self.sources) for i in range(len(cells))]
        )


def _cell_source(cell: Dict[str, Any]) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        return "".join(s for s in src if isinstance(s, str))
    return src if isinstance(src, str) else ""


def _language(data: Dict[str, Any]) -> Optional[str]:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    for key, sub in (("kernelspec", "language"), ("language_info", "name")):
        value = meta.get(key)
        if isinstance(value, dict) and isinstance(value.get(sub), str):
            return value[sub].lower()
    return None


def _detect_style(text: str) -> JsonStyle:
    m = re.match(r"\{\r?\n([ \t]+)\S", text)
    indent = len(m.group(1)) if m else None
    ascii_only = all(ord(c) < 128 for c in text)
    return JsonStyle(indent=indent, ensure_ascii=ascii_only and "\\u" in text,
                     final_newline=text.endswith("\n"))


def read_notebook(data: bytes) -> Notebook:
    """Parse a notebook's bytes. Raises NotebookError with a message for the user."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise NotebookError(f"not UTF-8: {exc}") from None
    try:
        parsed = json.loads(text)
    except ValueError as exc:
        raise NotebookError(f"not valid notebook JSON: {exc}") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("cells"), list):
        raise NotebookError("not a Jupyter notebook (no `cells` list; nbformat 4 is expected)")
    nb = Notebook(parsed, _detect_style(text))
    language = _language(parsed)
    if language is not None and language != "python":
        return nb  # an R or Julia notebook: nothing of ours to check
    for index, cell in enumerate(parsed["cells"]):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            nb.code_cells.append(index)
            nb.sources[index] = _cell_source(cell)
    return nb


def program_text(data: bytes) -> str:
    """The program the engine analyses for a notebook's bytes (raises NotebookError)."""
    return read_notebook(data).program.text


# --------------------------------------------------------------------------- positions
class CellMap:
    """Program rows -> (cell number, row in that cell)."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.lines = split_lines(program.text)

    def locate(self, row: int) -> Optional[Tuple[int, int]]:
        found = self.program.to_cell(row)
        if found is None:
            return None
        cell, local = found
        return cell.index + 1, local

    def span(self, span: Span) -> Optional[Tuple[int, Span]]:
        """A program span in its first cell's rows (clipped to that cell's last line)."""
        found = self.program.to_cell(span.row)
        if found is None:
            return None
        cell, row = found
        end_row, end_column = span.end_row - cell.start + 1, span.end_column
        if end_row > cell.rows:
            last = self.lines[cell.end - 1] if 0 < cell.end <= len(self.lines) else ""
            end_row, end_column = cell.rows, len(last) + 1
        return cell.index + 1, Span(row, span.column, end_row, end_column)


def cell_map_of(data: bytes) -> Optional[CellMap]:
    try:
        return CellMap(read_notebook(data).program)
    except NotebookError:
        return None


def read_cell_map(path: str) -> Optional[CellMap]:
    try:
        with open(path, "rb") as fh:
            return cell_map_of(fh.read())
    except OSError:
        return None


def notebook_maps(filenames: Sequence[str], stdin: Optional[Tuple[str, bytes]] = None) -> Dict[str, CellMap]:
    """The cell maps of the notebooks among ``filenames`` (read now: after ``--fix``, the
    fixed file). ``stdin``: (name, bytes) of what was read from standard input."""
    out: Dict[str, CellMap] = {}
    for name in dict.fromkeys(filenames):
        if not is_notebook(name):
            continue
        if stdin is not None and name == stdin[0]:
            found = cell_map_of(stdin[1])
        else:
            found = read_cell_map(name)
        if found is not None:
            out[name] = found
    return out


def parse_error(filename: str, message: str) -> Diagnostic:
    from gradwarden.engine.diagnostic import Severity

    return Diagnostic(PARSE_ERROR_CODE, f"cannot read notebook: {message}", Severity.ERROR, filename,
                      Span(1, 1, 1, 1), rule="syntax-error")


# --------------------------------------------------------------------------- fixing
def _fix_text(nb: Notebook) -> str:
    """The program with a boundary comment between cells (same cell texts as ``program``)."""
    parts: List[str] = []
    for index in nb.code_cells:
        body = mask_magics(nb.sources[index])
        if body and not body.endswith(("\n", "\r")):
            body += "\n"
        parts.append(body)
    return (CELL_BOUNDARY + "\n").join(parts)


def _split_fixed(text: str, n_cells: int) -> Optional[List[str]]:
    cells: List[List[str]] = [[]]
    for line in split_lines(text, keepends=True):
        if line.strip() == CELL_BOUNDARY:
            cells.append([])
        else:
            cells[-1].append(line)
    if len(cells) != n_cells:
        return None
    return ["".join(c) for c in cells]


def _restore_cell(original: str, new_masked: str) -> str:
    """The fixed cell with its magics back: lines the fix did not touch come from the
    original cell (where ``%timeit`` is still ``%timeit``), the others from the fix."""
    old_masked = mask_magics(original)
    ends_with_newline = original.endswith(("\n", "\r"))
    padded = old_masked if (not old_masked or ends_with_newline) else old_masked + "\n"
    if new_masked == padded:
        return original
    old_lines = split_lines(padded, keepends=True)
    orig_lines = split_lines(original if (not original or ends_with_newline) else original + "\n", keepends=True)
    new_lines = split_lines(new_masked, keepends=True)
    out: List[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        out.extend(orig_lines[i1:i2] if tag == "equal" else new_lines[j1:j2])
    result = "".join(out)
    if not ends_with_newline and result.endswith("\n"):
        result = result[:-1]
    return result


def _set_source(cell: Dict[str, Any], text: str) -> None:
    if isinstance(cell.get("source"), list):
        cell["source"] = split_lines(text, keepends=True)
    else:
        cell["source"] = text


def dump_notebook(nb: Notebook) -> bytes:
    text = json.dumps(nb.data, indent=nb.style.indent, ensure_ascii=nb.style.ensure_ascii)
    if nb.style.final_newline:
        text += "\n"
    return text.encode("utf-8")


@dataclass
class NotebookFix:
    data: bytes  # the notebook to write (the input when nothing changed)
    count: int = 0  # fixes applied
    changed_cells: Dict[int, Tuple[str, str]] = field(default_factory=dict)  # cell index -> (old, new)
    remaining: List[Diagnostic] = field(default_factory=list)  # of the fixed program (program rows)
    error: Optional[str] = None


def fix_notebook(data: bytes, filename: str, *, unsafe: bool, analyze: Analyze) -> NotebookFix:
    """Apply the fixes to a notebook's cells. ``analyze(program_text)`` is the check pipeline
    (engine, noqa, selection). Never raises for a bad notebook: ``error`` says why."""
    from gradwarden.fixes.apply import fix_until_stable

    try:
        nb = read_notebook(data)
    except NotebookError as exc:
        return NotebookFix(data, error=str(exc))
    if not nb.code_cells:
        return NotebookFix(data)
    outcome = fix_until_stable(_fix_text(nb), analyze, unsafe=unsafe)
    if not outcome.count:
        return NotebookFix(data, remaining=analyze(nb.program.text))
    pieces = _split_fixed(outcome.source, len(nb.code_cells))
    if pieces is None:
        return NotebookFix(data, remaining=analyze(nb.program.text),
                           error="a fix would move code across cells; fix it by hand")
    result = NotebookFix(data, count=outcome.count)
    cells = nb.data["cells"]
    for index, piece in zip(nb.code_cells, pieces):
        old = nb.sources[index]
        new = _restore_cell(old, piece)
        if new != old:
            _set_source(cells[index], new)
            nb.sources[index] = new
            result.changed_cells[index] = (old, new)
    result.data = dump_notebook(nb) if result.changed_cells else data
    result.remaining = analyze(nb.program.text)
    return result


def notebook_diff(fix: NotebookFix, filename: str) -> str:
    """A unified diff per changed cell, headed ``a/nb.ipynb:cell 3`` (ruff's form)."""
    from gradwarden.fixes.apply import unified_diff

    return "".join(unified_diff(old, new, f"{filename}:cell {index + 1}")
                   for index, (old, new) in sorted(fix.changed_cells.items()))
