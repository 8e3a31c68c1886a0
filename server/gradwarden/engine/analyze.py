"""Entry point of the engine: source text in, diagnostics out (no torch, no LSP)."""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple, Union

from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.engine.entry import PARSE_ERROR_CODE
from gradwarden.engine.entry import collect_between_files as _collect_between_files
from gradwarden.engine.entry import fewer_collections as _fewer_collections
from gradwarden.engine.entry import parse_error as _parse_error
from gradwarden.engine.front.source import SourceText, analysed_in_parts, decode_source


def analyze_source(source: Union[str, bytes], filename: str = "<stdin>") -> List[Diagnostic]:
    """Analyse one module. Never raises on bad input: a file that cannot be decoded or parsed
    yields one GW001 diagnostic."""
    # One window of fewer collections from the parse to the release of the tree: between two
    # windows (the parse's, the analysis') the young generation holds the whole new tree, and
    # the first allocation there scanned it and promoted it towards full collections of
    # everything the process holds (timm: 0.85 s of 10 s, spent creating SourceText).
    with _fewer_collections():
        found = _analyze_source(source, filename)
    _collect_between_files()
    return found


def _analyze_source(source: Union[str, bytes], filename: str) -> List[Diagnostic]:
    if isinstance(source, bytes):
        parsed = _imported_already(filename, source)
        if parsed is not None:
            return _analyze(parsed.tree, parsed.src, filename)
        text, decode_error = decode_source(source)
        if text is None:
            return [_parse_error(filename, 1, 1, f"cannot decode file: {decode_error}")]
    else:
        text = source
    if analysed_in_parts(text):
        from gradwarden.engine.incremental import parts

        # never the whole tree of a very large (generated) module at once (engine/incremental/parts.py)
        found = parts.analyze_in_parts(text, filename)
        if found is not None:
            return found
    try:
        # Parsing allocates an object per node: with the collector's default thresholds it
        # would run full collections over everything the process holds (the shared parses of
        # engine/front/imports.py included) several times per file, for nothing (a tree has no
        # garbage cycles to find).
        with _fewer_collections():
            tree = ast.parse(text, filename=filename, type_comments=False)
    except SyntaxError as exc:
        return [_parse_error(filename, exc.lineno or 1, (exc.offset or 1), f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return [_parse_error(filename, 1, 1, f"cannot parse file: {type(exc).__name__}: {exc}")]
    return _analyze(tree, SourceText(text), filename)


def _calls_project(tree: ast.Module, filename: str) -> bool:
    """A script without a main block whose module-level code calls into the project's modules
    (a notebook export calling ``fit()`` from ``utils/``): a program, whatever its own text holds."""
    from gradwarden.engine.front.imports import ImportResolver, calls_project_code, imported_top_level_calls

    calls = imported_top_level_calls(tree, filename)
    return bool(calls) and calls_project_code(calls, ImportResolver(filename, tree=tree))


def _analyze(tree: ast.Module, src: SourceText, filename: str) -> List[Diagnostic]:
    from gradwarden.engine.front.triggers import nothing_to_analyse

    if nothing_to_analyse(src.text) and not ("__main__" in src.text and "import" in src.text) and \
            not _calls_project(tree, filename):
        return []  # (a program's hazards may all lie in the modules it imports: the interpreter decides)
    from gradwarden.engine.assembly import analyze_module  # late: keeps import light

    with _fewer_collections():
        return analyze_module(tree, src, filename)


# A small program that takes every path a first analysis loads lazily: the interpreter and the
# rules (imported on first use, to keep the command line's start light), the op table (JSON),
# the torch-module and in-place-op semantics, a backward.
_WARM_UP = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.act(self.fc(x))


x = torch.randn(2, 4, requires_grad=True)
y = Net()(x).sigmoid()
y.mul_(2)
y.sum().backward()
"""


def preload() -> None:
    """Load what a first analysis loads, now. A process that forks workers calls it first, so
    that they share one copy instead of each loading its own (a worker forked from a process
    that never analysed would spend about as much as a dozen small files on it)."""
    _analyze(ast.parse(_WARM_UP), SourceText(_WARM_UP), "<warm-up>")


def _imported_already(filename: str, data: bytes):
    """The parse of this very file (same path, same bytes) that an earlier analysis of this
    process made when it followed an import of it (engine/front/imports.py), if still held."""
    import os

    from gradwarden.engine.front import imports

    if not imports._PARSED:
        return None
    try:
        path = os.path.realpath(filename)
    except (OSError, ValueError):
        return None
    return imports.parsed_already((path, data))


# The findings each script made in an imported file, kept per (script, imported file) with
# what they depended on: the script's bytes, the imported file's text, the other files followed.
_THROUGH: Dict[Tuple[str, str], Tuple[Tuple[str, str, Dict[str, Optional[str]]], List[Diagnostic]]] = {}


def findings_through_importers(text: str, filename: str) -> List[Diagnostic]:
    """What the analyses of the project's scripts that import ``filename`` (directly or through
    other modules; ``engine/front/projectgraph.py``) found in it, with ``text`` standing for
    its content: a hazard whose fix goes in a helper module shows there, named ``filename``,
    with the script's call chain in its related places (each with its file)."""
    import hashlib
    import os
    from dataclasses import replace
    from pathlib import Path

    from gradwarden.engine.front import imports, projectgraph

    if not filename or not os.path.isfile(filename):
        return []
    graph = projectgraph.graph_for(filename)
    if graph is None:
        return []
    me = Path(filename).resolve()
    data = text.encode("utf-8")
    mine = hashlib.sha256(data).hexdigest()
    out: Dict[Tuple[str, int, int], Diagnostic] = {}
    for script in graph.importers(me):
        try:
            script_bytes = script.read_bytes()
        except OSError:
            continue
        stamp = (hashlib.sha256(script_bytes).hexdigest(), mine)
        kept = _THROUGH.get((str(script), str(me)))
        if kept is not None and kept[0][:2] == stamp and all(
                _digest(dep) == want for dep, want in kept[0][2].items()):
            found = kept[1]
        else:
            with imports.following() as followed, imports.overlaid({str(me): data}):
                diags = analyze_source(script_bytes, str(script))
            found = [d for d in diags if _same_file(d.filename, me)]
            followed.pop(str(me), None)
            _THROUGH[(str(script), str(me))] = ((stamp[0], stamp[1], dict(followed)), found)
        for d in found:
            key = (d.code, d.span.row, d.span.column)
            if key not in out or d.outranks(out[key]):
                out[key] = replace(d, filename=filename)
    return sorted(out.values(), key=lambda d: d.sort_key())


def _same_file(name: str, path) -> bool:
    import os

    return os.path.realpath(name) == str(path)


def _digest(path: str) -> Optional[str]:
    import hashlib

    try:
        with open(path, "rb") as fh:
            return hashlib.sha256(fh.read()).hexdigest()
    except OSError:
        return None


def parse_error_of(diags: List[Diagnostic]) -> Optional[Diagnostic]:
    for d in diags:
        if d.code == PARSE_ERROR_CODE:
            return d
    return None
