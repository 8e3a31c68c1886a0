"""What ``gradwarden check`` adds to its diagnostics when it prints them: the cells of the
notebooks it reports on (positions ``nb.ipynb:cell 3:2:1``), and the fix that a fix run would
apply to each diagnostic (``[*]``, ``N fixable with --fix``, ``fix.edits`` in JSON, ``fixes``
in SARIF). Kept out of cli.py, which only wires it in.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Dict, Optional, Sequence

from gradwarden.engine.diagnostic import Diagnostic

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.checkrun import CheckRun
    from gradwarden.fixability import FixIndex
    from gradwarden.notebook import CellMap

# The formats whose output says which diagnostics are fixable, and how.
FIX_AWARE_FORMATS = ("text", "json", "json-lines", "sarif")


@dataclass
class Extras:
    notebooks: Dict[str, "CellMap"]
    fixes: Optional["FixIndex"]


def stdin_name(args: argparse.Namespace) -> Optional[str]:
    paths = list(getattr(args, "paths", None) or [])
    if "-" in paths or (not paths and getattr(args, "stdin_filename", None)):
        return getattr(args, "stdin_filename", None) or "-"
    return None


def _reader(args: argparse.Namespace, run: "CheckRun"):
    """filename -> the text its diagnostics were computed on (a notebook: its program)."""
    from gradwarden.engine.front.source import decode_source

    from_stdin = stdin_name(args)

    def source_of(filename: str) -> Optional[str]:
        try:
            if from_stdin is not None and filename == from_stdin:
                data = run.stdin_data or b""
            else:
                with open(filename, "rb") as fh:
                    data = fh.read()
        except OSError:
            return None
        if filename.lower().endswith(".ipynb"):  # gradwarden.notebook, imported only for notebooks
            from gradwarden.notebook import NotebookError, program_text

            try:
                return program_text(data)
            except NotebookError:
                return None
        return decode_source(data)[0]

    return source_of


def source_reader(args: argparse.Namespace, run: "CheckRun"):
    """filename -> the text its diagnostics were computed on (the HTML report's source lines)."""
    return _reader(args, run)


def extras(args: argparse.Namespace, run: "CheckRun") -> Extras:
    diags: Sequence[Diagnostic] = run.diagnostics
    notebooks: Dict[str, "CellMap"] = {}
    names = [d.filename for d in diags] + [r.filename for d in diags for r in d.related if r.filename]
    if any(n.lower().endswith(".ipynb") for n in names):
        from gradwarden.notebook import notebook_maps

        name = stdin_name(args)
        stdin = (name, run.stdin_data) if name is not None and run.stdin_data is not None else None
        notebooks = notebook_maps(names, stdin)
    fixes = None
    if args.output_format in FIX_AWARE_FORMATS and not args.statistics and any(d.fixes for d in diags):
        from gradwarden.fixability import index_fixes
        from gradwarden.runner import diagnose

        def analyze(text: str, filename: str):  # the fix run's own analysis of a fixed text
            return diagnose(text, filename, run.settings, ignore_noqa=args.ignore_noqa)

        # text needs only which findings a fix run fixes ([*]); JSON and SARIF the edits too
        want_edits = args.output_format != "text"
        cache = getattr(run, "result_cache", None)  # warm re-runs: no libcst, no fix runs
        fixes = (cache.index_fixes if cache is not None else index_fixes)(diags, _reader(args, run), analyze,
                                                                           want_edits)
    return Extras(notebooks, fixes)


def fixable_summary(run: "CheckRun", found: Extras) -> str:
    """The ``[*] N fixable with --fix (M more with --unsafe-fixes)`` line (with its newline), or ""."""
    if found.fixes is None:
        return ""
    from gradwarden.fixability import fixable_line

    line = fixable_line(found.fixes, run.diagnostics)
    return line + "\n" if line else ""
