"""What every way into the engine shares (the whole-text analysis in ``analyze.py``, the parts
of a very large text in ``parts.py``, the editor's incremental analysis): the collector window
and the parse-error diagnostic. Here, so that those modules need not import each other."""
from __future__ import annotations

import gc
import threading

from gradwarden.engine.diagnostic import Diagnostic, Severity, Span

PARSE_ERROR_CODE = "GW001"


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


def fewer_collections() -> _FewerCollections:
    return _FewerCollections()


def parse_error(filename: str, row: int, col: int, message: str) -> Diagnostic:
    return Diagnostic(
        code=PARSE_ERROR_CODE,
        message=message,
        severity=Severity.ERROR,
        filename=filename,
        span=Span(row, max(col, 1), row, max(col, 1)),
        rule="parse-error",
    )
