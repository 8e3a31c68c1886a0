"""What every way into the engine shares (the whole-text analysis in ``analyze.py``, the parts
of a very large text in ``parts.py``, the editor's incremental analysis): the collector window
and the parse-error diagnostic. Here, so that those modules need not import each other."""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Dict, Iterator, Optional

from gradwarden.engine.diagnostic import Diagnostic, Severity, Span

PARSE_ERROR_CODE = "GW001"


class _FewerCollections:
    """The interpreter allocates many small, short-lived objects, nearly all freed by their
    reference counts: a collection during an analysis finds little, but traverses every
    container still alive (the syntax tree, the states, the caches), and with gen 0 at
    200,000 it still ran some 18 times over a library of 650 files for a quarter of the CPU of
    its ``check``. So the automatic collector is off while any analysis runs, and
    ``collect_between_files`` collects the youngest generation after each file, when its tree
    and states are gone: what is left young then is the file's garbage cycles (freed there,
    so an analysis of thousands of files holds no more than one file's) and what the caches
    keep. The thresholds are raised too (for the code that turns the collector back on
    itself), and both are restored when the last analysis ends. Nested and concurrent
    analyses (the language server's workers) share one window."""

    _lock = threading.Lock()
    _depth = 0
    _saved = (700, 10, 10)
    _was_enabled = True

    def __enter__(self) -> None:
        with self._lock:
            if _FewerCollections._depth == 0:
                _FewerCollections._saved = gc.get_threshold()
                _FewerCollections._was_enabled = gc.isenabled()
                gc.set_threshold(200_000, 50, 50)
                gc.disable()
            _FewerCollections._depth += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            _FewerCollections._depth -= 1
            if _FewerCollections._depth == 0:
                gc.set_threshold(*_FewerCollections._saved)
                if _FewerCollections._was_enabled:
                    gc.enable()


def fewer_collections() -> _FewerCollections:
    return _FewerCollections()


def collect_between_files() -> None:
    """After one file's analysis, inside a longer window (a run over many files): collect the
    youngest generation, i.e. what that file's analysis left alive, its garbage cycles among
    it. Outside any window the collector runs on its own again."""
    if _FewerCollections._depth > 0:
        gc.collect(0)


# Answers about the file system (where an imported name of the project resolves) kept for a
# whole run over files that do not change while it runs: a ``check`` and its workers, never
# the language server. engine/front/imports.py keys and fills it; None outside such a run
# (each analysis then keeps its answers for itself only).
_RUN_ANSWERS: Optional[Dict[tuple, tuple]] = None


def run_answers() -> Optional[Dict[tuple, tuple]]:
    return _RUN_ANSWERS


@contextmanager
def files_fixed() -> Iterator[None]:
    """While the block runs, the project's files do not change (a ``check`` over a tree): import
    resolution keeps its answers for every analysis of the block, not only for one."""
    global _RUN_ANSWERS
    outer = _RUN_ANSWERS
    if outer is None:
        _RUN_ANSWERS = {}
    try:
        yield
    finally:
        _RUN_ANSWERS = outer


def fix_files_for_process() -> None:
    """A worker process of one ``check`` (it lives as long as the run): keep the answers across
    the chunks of files it is given, as ``files_fixed`` does for a block."""
    global _RUN_ANSWERS
    if _RUN_ANSWERS is None:
        _RUN_ANSWERS = {}


def parse_error(filename: str, row: int, col: int, message: str) -> Diagnostic:
    return Diagnostic(
        code=PARSE_ERROR_CODE,
        message=message,
        severity=Severity.ERROR,
        filename=filename,
        span=Span(row, max(col, 1), row, max(col, 1)),
        rule="parse-error",
    )
