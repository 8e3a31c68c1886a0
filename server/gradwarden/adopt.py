"""``gradwarden check --add-noqa [PATH ...]``: adopt gradwarden on a codebase that already has
findings (ruff's ``--add-noqa``). Every current finding's line gets ``# noqa: GWxxx`` (existing
directives keep their codes and spelling and are extended; a multi-line string or a
backslash-continued statement gets it on the row where ``# noqa`` is read back, see
``noqa.add_noqa_comments``), so the next ``gradwarden check`` is clean and a new hazard still
fails it. Notebooks get the comment in the cell's own source (outputs, metadata and the JSON
layout are kept). Files are rewritten atomically in their own encoding, BOM and newlines.

A ``check`` extension (``cli.CHECK_EXTENSION_MODULES``): an option and a stage that runs
between collecting the diagnostics and reporting them.
"""
from __future__ import annotations

import argparse
import codecs
import io
import os
import tokenize
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, TextIO, Tuple

from gradwarden import cli
from gradwarden.noqa import NoqaAddition, add_noqa_comments, build_noqa_map

PARSE_ERROR = "GW001"  # a syntax error: only an edit fixes it, a comment cannot silence it


def add_options(parser: argparse.ArgumentParser) -> None:
    if "--add-noqa" in parser._option_string_actions:
        return
    group = parser.add_argument_group("adoption")
    group.add_argument("--add-noqa", action="store_true", default=False,
                       help="add `# noqa: CODE` to the line of every current finding (keeping existing "
                            "directives), so that the next check passes and only new hazards fail it")


@dataclass
class FileOutcome:
    data: Optional[bytes] = None  # what to write (None: unchanged)
    addition: Optional[NoqaAddition] = None
    error: Optional[str] = None
    not_silenced: List[Tuple[int, str]] = field(default_factory=list)


def _decode(data: bytes) -> Tuple[str, str, bool]:
    """(text, encoding, BOM) as Python reads a source file."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    bom = data.startswith(codecs.BOM_UTF8)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, ("utf-8" if encoding == "utf-8-sig" else encoding), bom


def annotate_source(data: bytes, codes_by_row: Dict[int, Set[str]]) -> FileOutcome:
    """A Python file's bytes with the directives added."""
    try:
        text, encoding, bom = _decode(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        return FileOutcome(error=f"cannot decode: {exc}")
    addition = add_noqa_comments(text, codes_by_row)
    out = FileOutcome(addition=addition)
    out.not_silenced = _unsilenced(addition.text, codes_by_row)
    if addition.text != text:
        encoded = addition.text.encode(encoding)
        out.data = (codecs.BOM_UTF8 + encoded) if bom else encoded
    return out


def _unsilenced(text: str, codes_by_row: Dict[int, Set[str]]) -> List[Tuple[int, str]]:
    noqa = build_noqa_map(text)
    return [(row, code) for row, codes in sorted(codes_by_row.items()) for code in sorted(codes)
            if not noqa.suppresses(code, row)]


def annotate_notebook(data: bytes, codes_by_row: Dict[int, Set[str]]) -> FileOutcome:
    """A notebook's bytes with the directives added to its code cells (rows: the program's)."""
    from gradwarden.lsp.positions import split_lines
    from gradwarden.notebook import NotebookError, dump_notebook, read_notebook

    try:
        nb = read_notebook(data)
    except NotebookError as exc:
        return FileOutcome(error=str(exc))
    program = nb.program
    addition = add_noqa_comments(program.text, codes_by_row)
    out = FileOutcome(addition=addition)
    old_lines = split_lines(program.text, keepends=True)
    new_lines = split_lines(addition.text, keepends=True)
    if len(old_lines) != len(new_lines):  # add_noqa_comments never adds a line; be safe
        return FileOutcome(error="the notebook's cells could not be matched to its program")
    changed_cells: Dict[int, List[str]] = {}
    for row, (old, new) in enumerate(zip(old_lines, new_lines), 1):
        if old == new:
            continue
        found = program.to_cell(row)
        if found is None:
            return FileOutcome(error=f"program row {row} is in no cell")
        cell, local = found
        index = int(cell.uri)
        lines = changed_cells.setdefault(index, split_lines(nb.sources[index], keepends=True))
        if not 1 <= local <= len(lines) or lines[local - 1].rstrip("\r\n") != old.rstrip("\r\n"):
            out.not_silenced += [(row, c) for c in sorted(codes_by_row.get(row, ()))]
            continue  # an IPython magic line (masked in the program): leave it as it is
        ending = lines[local - 1][len(lines[local - 1].rstrip("\r\n")):]
        lines[local - 1] = new.rstrip("\r\n") + ending
    cells = nb.data["cells"]
    for index, lines in changed_cells.items():
        text = "".join(lines)
        if text == nb.sources[index]:
            continue
        nb.sources[index] = text
        if isinstance(cells[index].get("source"), list):
            cells[index]["source"] = split_lines(text, keepends=True)
        else:
            cells[index]["source"] = text
    new_program = nb.program.text
    out.not_silenced = sorted(set(out.not_silenced) | set(_unsilenced(new_program, codes_by_row)))
    if new_program != program.text:
        out.data = dump_notebook(nb)
    return out


def _write(path: str, data: bytes) -> None:
    from gradwarden.atomicio import replace_atomically

    try:
        mode: Optional[int] = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = None
    replace_atomically(path, data, mode, sync=True)


def add_noqa_stage(args: argparse.Namespace, run: "cli.CheckRun", stdout: TextIO, stderr: TextIO) -> Optional[int]:
    """Between collect and report: write the directives, say how many, end ``check``."""
    if not getattr(args, "add_noqa", False):
        return None
    clashing = [flag for flag, dest in (("--fix", "fix"), ("--diff", "diff"), ("--fix-only", "fix_only"))
                if getattr(args, dest, False)]
    if clashing:
        cli.error_to(stderr, f"--add-noqa cannot be combined with {', '.join(clashing)} "
                             "(fix first, then add noqa for what remains)")
        return cli.EXIT_ERROR
    if "-" in list(args.paths or []) or (not args.paths and args.stdin_filename):
        cli.error_to(stderr, "--add-noqa writes files: give paths, not standard input")
        return cli.EXIT_ERROR
    if getattr(args, "ignore_noqa", False):
        cli.error_to(stderr, "--add-noqa cannot be combined with --ignore-noqa")
        return cli.EXIT_ERROR
    by_file: Dict[str, Dict[int, Set[str]]] = {}
    syntax_errors: List[str] = []
    for d in run.diagnostics:
        if d.code == PARSE_ERROR:
            syntax_errors.append(d.filename)
            continue
        by_file.setdefault(d.filename, {}).setdefault(d.span.row, set()).add(d.code)
    errors: List[str] = []
    lines_changed = codes_added = files_changed = 0
    unsilenced: List[str] = []
    for filename in sorted(by_file):
        codes = by_file[filename]
        try:
            with open(filename, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            errors.append(f"{filename}: cannot read: {exc.strerror or exc}")
            continue
        notebook = filename.lower().endswith(".ipynb")
        outcome = annotate_notebook(data, codes) if notebook else annotate_source(data, codes)
        if outcome.error:
            errors.append(f"{filename}: cannot add noqa: {outcome.error}")
            continue
        unsilenced += [f"{filename}:{row}: {code}" for row, code in outcome.not_silenced]
        if outcome.data is None or outcome.addition is None:
            continue
        try:
            _write(filename, outcome.data)
        except OSError as exc:
            errors.append(f"{filename}: cannot write: {exc.strerror or exc}")
            continue
        files_changed += 1
        lines_changed += outcome.addition.lines_changed
        codes_added += outcome.addition.codes_added
    for message in run.usage_errors + run.errors + errors:
        cli.error_to(stderr, message)
    for where in unsilenced:
        cli.error_to(stderr, f"{where} could not be silenced with a `# noqa` comment")
    if syntax_errors:
        names = ", ".join(sorted(set(syntax_errors)))
        print(f"warning: {len(set(syntax_errors))} file(s) do not parse; a `# noqa` cannot silence a syntax "
              f"error (GW001): {names}", file=stderr)
    if not getattr(args, "silent", False):
        what = "directive" if lines_changed == 1 else "directives"
        print(f"Added {lines_changed} noqa {what} ({codes_added} code(s)) to {files_changed} file(s).", file=stderr)
    if run.errors or run.usage_errors or errors or unsilenced:
        return cli.EXIT_ERROR
    return cli.EXIT_OK


def register() -> None:
    """Called by ``gradwarden.cli`` each time it builds its parser (idempotent)."""
    if add_options not in cli._CHECK_OPTION_HOOKS:
        cli.register_check_options(add_options)
    if add_noqa_stage not in cli._CHECK_STAGES:
        cli.register_check_stage(add_noqa_stage)


__all__ = ["add_noqa_stage", "annotate_notebook", "annotate_source", "register"]
