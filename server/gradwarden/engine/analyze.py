"""Entry point of the engine: source text in, diagnostics out (no torch, no LSP)."""
from __future__ import annotations

import ast
import gc
import threading
from typing import List, Optional, Union

from gradwarden.engine.diagnostic import Diagnostic, Severity, Span
from gradwarden.engine.source import SourceText, analysed_in_parts, decode_source

PARSE_ERROR_CODE = "GW001"


def analyze_source(source: Union[str, bytes], filename: str = "<stdin>") -> List[Diagnostic]:
    """Analyse one module. Never raises on bad input: a file that cannot be decoded or parsed
    yields one GW001 diagnostic."""
    # One window of fewer collections from the parse to the release of the tree: between two
    # windows (the parse's, the analysis') the young generation holds the whole new tree, and
    # the first allocation there scanned it and promoted it towards full collections of
    # everything the process holds (timm: 0.85 s of 10 s, spent creating SourceText).
    with _fewer_collections():
        return _analyze_source(source, filename)


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
        from gradwarden.engine import parts

        # never the whole tree of a very large (generated) module at once (engine/parts.py)
        found = parts.analyze_in_parts(text, filename)
        if found is not None:
            return found
    try:
        # Parsing allocates an object per node: with the collector's default thresholds it
        # would run full collections over everything the process holds (the shared parses of
        # engine/imports.py included) several times per file, for nothing (a tree has no
        # garbage cycles to find).
        with _fewer_collections():
            tree = ast.parse(text, filename=filename, type_comments=False)
    except SyntaxError as exc:
        return [_parse_error(filename, exc.lineno or 1, (exc.offset or 1), f"syntax error: {exc.msg}")]
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return [_parse_error(filename, 1, 1, f"cannot parse file: {type(exc).__name__}: {exc}")]
    return _analyze(tree, SourceText(text), filename)


def _analyze(tree: ast.Module, src: SourceText, filename: str) -> List[Diagnostic]:
    from gradwarden.engine.triggers import nothing_to_analyse

    if nothing_to_analyse(src.text):
        return []
    from gradwarden.engine.interpreter import analyze_module  # late: keeps import light

    with _fewer_collections():
        return analyze_module(tree, src, filename)


def _imported_already(filename: str, data: bytes):
    """The parse of this very file (same path, same bytes) that an earlier analysis of this
    process made when it followed an import of it (engine/imports.py), if still held."""
    import os

    from gradwarden.engine import imports

    if not imports._PARSED:
        return None
    try:
        path = os.path.realpath(filename)
    except (OSError, ValueError):
        return None
    return imports.parsed_already((path, data))


class _FewerCollections:
    """The interpreter allocates many small, short-lived, acyclic objects: with the default
    thresholds the collector runs thousands of times per file for nothing. Raise generation
    0's threshold for the duration of an analysis (cycles are still collected), then restore
    it. Nested and concurrent analyses (the language server's workers) share one raise."""

    _lock = threading.Lock()
    _depth = 0
    _saved = (700, 10, 10)

    def __enter__(self) -> None:
        with self._lock:
            if _FewerCollections._depth == 0:
                _FewerCollections._saved = gc.get_threshold()
                gc.set_threshold(200_000, 50, 50)
            _FewerCollections._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            _FewerCollections._depth -= 1
            if _FewerCollections._depth == 0:
                gc.set_threshold(*_FewerCollections._saved)


def _fewer_collections() -> _FewerCollections:
    return _FewerCollections()


def _parse_error(filename: str, row: int, col: int, message: str) -> Diagnostic:
    return Diagnostic(
        code=PARSE_ERROR_CODE,
        message=message,
        severity=Severity.ERROR,
        filename=filename,
        span=Span(row, max(col, 1), row, max(col, 1)),
        rule="parse-error",
    )


def parse_error_of(diags: List[Diagnostic]) -> Optional[Diagnostic]:
    for d in diags:
        if d.code == PARSE_ERROR_CODE:
            return d
    return None
