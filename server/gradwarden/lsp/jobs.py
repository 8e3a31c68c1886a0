"""What an analysis worker runs. Plain functions of plain data (picklable in and out), so that
the same code runs in a worker process, in a thread, or directly in a test.

Every job is named in ``JOBS``; the server calls them through ``worker.WorkerPool.run``.
None of them imports torch or executes the analysed code.
"""
from __future__ import annotations

import importlib
import os
import sys
from collections import OrderedDict
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Span
from gradwarden.lsp.cancel import cancellation_in

class _NoTorch:
    """A meta-path finder that refuses ``import torch`` (and its submodules) in the server and
    its workers: the analysis is static by design, and a stray import would take seconds and
    hundreds of megabytes."""

    def find_spec(self, name: str, path: Any = None, target: Any = None):  # noqa: D401
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"gradwarden's language server never imports {name} (static analysis only)")
        return None

    def find_module(self, name: str, path: Any = None):  # pragma: no cover - legacy protocol
        self.find_spec(name)
        return None


def forbid_torch() -> None:
    if not any(isinstance(f, _NoTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoTorch())


# --------------------------------------------------------------------------- the project
ROOTS_ENV = "GRADWARDEN_WORKSPACE_FOLDERS"  # the server's workspace folders, for its workers
_roots_set = False


def _project_roots() -> None:
    """Take the workspace folders as project roots (``imports.set_root_hints``), once."""
    global _roots_set
    if _roots_set:
        return
    _roots_set = True
    folders = [f for f in os.environ.get(ROOTS_ENV, "").split(os.pathsep) if f]
    if folders:
        from gradwarden.engine.front.imports import set_root_hints

        set_root_hints(folders)


def in_project(diags: List[Diagnostic], text: str, filename: str) -> List[Diagnostic]:
    """The document's own findings (an analysis of a script also finds hazards in the modules it
    imports: those show in their own documents), and the findings that the project's scripts
    importing this document make in it (``engine.analyze.findings_through_importers``)."""
    from gradwarden.engine.analyze import findings_through_importers
    from gradwarden.noqa import filter_noqa

    own = [d for d in diags if d.filename == filename]
    try:
        found = findings_through_importers(text, filename)
    except Exception:  # noqa: BLE001 - another file's analysis never takes this document's away
        found = []
    if not found:
        return own
    seen = {(d.code, d.span.row, d.span.column): d for d in own}
    extra = [d for d in filter_noqa(found, text) if (d.code, d.span.row, d.span.column) not in seen
             or d.outranks(seen[(d.code, d.span.row, d.span.column)])]
    keys = {(d.code, d.span.row, d.span.column) for d in extra}
    return [d for d in own if (d.code, d.span.row, d.span.column) not in keys] + extra


# --------------------------------------------------------------------------- jobs
def diagnose(text: str, filename: str) -> List[Diagnostic]:
    """Analysis and ``# noqa`` (the settings are applied by the server, so that a settings
    change never needs a re-analysis)."""
    from gradwarden.runner import diagnose as run_diagnose

    _project_roots()
    return in_project(run_diagnose(text, filename, None), text, filename)


_ANALYZERS: "OrderedDict[str, Any]" = OrderedDict()
MAX_ANALYZERS = 4  # per worker: documents being edited (each keeps per-definition results)


def diagnose_incremental(text: str, filename: str) -> Tuple[List[Diagnostic], Dict[str, Any]]:
    """``diagnose`` for a document being edited: only the top-level definitions an edit can
    change are analysed again (``engine/incremental/incremental.py``). Also returns what was done and the
    worker's seconds (parse, analysis), which the server keeps for ``serverStatus``."""
    import time

    from gradwarden.engine.incremental.incremental import IncrementalAnalyzer
    from gradwarden.noqa import filter_noqa

    cpu, wall = time.thread_time(), time.perf_counter()
    analyzer = _ANALYZERS.get(filename)
    cold = analyzer is None  # this worker has not analysed the document before (or forgot it)
    if cold:
        analyzer = _ANALYZERS[filename] = IncrementalAnalyzer()
    _ANALYZERS.move_to_end(filename)
    while len(_ANALYZERS) > MAX_ANALYZERS:
        _ANALYZERS.popitem(last=False)
    from gradwarden.engine.entry import fewer_collections

    _project_roots()
    with fewer_collections():  # the reparse too: the worker's heap (trees, records) is large to walk
        diags = filter_noqa(analyzer.analyze(text, filename), text)
        diags = in_project(diags, text, filename)
    st = analyzer.last_stats
    info = {"parse_s": st.parse_s, "analysis_s": st.analysis_s, "groups": st.groups,
            "analysed": len(st.analysed), "reused": len(st.reused), "full": st.full,
            "cpu_s": time.thread_time() - cpu, "wall_s": time.perf_counter() - wall, "cold": cold, "pid": os.getpid()}  # the job's CPU seconds (steadier than wall on a loaded machine)
    return diags, info


def hover_table(text: str, filename: str) -> Any:
    """Every timeline hover may show for ``text`` (``hover_table.build``), sent back to the
    server, which answers hovers from it without a worker. None: the engine has no recorder."""
    from gradwarden.lsp.hover_table import build

    return build(text, filename)


FIXER_CACHE = 1  # parsed (libcst) documents the fixer may keep per worker: tens of MB each


def _fixes_module():
    try:
        module = importlib.import_module("gradwarden.fixes")
    except ImportError:
        return None
    # A worker serves one document at a time; the fixer's parse cache (sized for the CLI's
    # passes over many files) would otherwise hold several large libcst trees per worker.
    size = getattr(module, "_CACHE_SIZE", None)
    if isinstance(size, int) and size > FIXER_CACHE:
        module._CACHE_SIZE = FIXER_CACHE
    return module


def fix_edits(text: str, diagnostic: Diagnostic, fix: Fix) -> Optional[List[Edit]]:
    """The edits realising ``fix`` on ``text``: the fixer's (``gradwarden.fixes.edits_for``)
    when it is installed, else the minimal edits the engine attached. None: not fixable."""
    module = _fixes_module()
    edits_for = getattr(module, "edits_for", None) if module else None
    if edits_for is not None:
        edits = edits_for(text, diagnostic, fix)
        if edits is not None:
            return list(edits)
        return None
    return list(fix.edits) if fix.edits else None


def fix_edits_many(text: str, pairs: Sequence[Tuple[Diagnostic, Fix]]) -> List[Optional[List[Edit]]]:
    """``fix_edits`` for several (diagnostic, fix) pairs of one text, in one round trip (the
    fixer parses the text once). A fix that fails is None; the others are still returned."""
    out: List[Optional[List[Edit]]] = []
    for diagnostic, fix in pairs:
        try:
            out.append(fix_edits(text, diagnostic, fix))
        except Exception as exc:  # noqa: BLE001 - one broken fix must not hide the others
            if cancellation_in(exc):
                raise  # a cancel that library code wrapped: the job ends here
            import logging

            logging.getLogger("gradwarden.lsp.jobs").exception("fix %r failed", fix.title)
            out.append(None)
    return out


def fix_all(text: str, diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> Tuple[str, int]:
    """Apply every safe fix (every fix with ``unsafe``): the fixer's ``fix_source`` when it is
    installed, else the engine's attached edits of each diagnostic's preferred applicable fix,
    skipping overlapping ones. Returns (new text, number of fixes applied)."""
    module = _fixes_module()
    fix_source = getattr(module, "fix_source", None) if module else None
    if fix_source is not None:
        new_text, n = fix_source(text, list(diagnostics), unsafe)
        return new_text, int(n)
    return apply_attached_fixes(text, diagnostics, unsafe)


def pick_fix(diagnostic: Diagnostic, unsafe: bool) -> Optional[Fix]:
    candidates = [f for f in diagnostic.fixes if (unsafe or f.safe) and f.edits]
    if not candidates:
        return None
    for f in candidates:
        if f.preferred:
            return f
    return candidates[0]


def apply_attached_fixes(text: str, diagnostics: Sequence[Diagnostic], unsafe: bool = False) -> Tuple[str, int]:
    chosen: List[Tuple[Fix, List[Edit]]] = []
    for d in diagnostics:
        f = pick_fix(d, unsafe)
        if f is not None:
            chosen.append((f, list(f.edits)))
    offsets = _Offsets(text)
    taken: List[Tuple[int, int]] = []
    edits: List[Tuple[int, int, str]] = []
    applied = 0
    for _, fix_edits_ in chosen:
        spans = [(offsets.of(e.span.row, e.span.column), offsets.of(e.span.end_row, e.span.end_column), e.content)
                 for e in fix_edits_]
        if any(_overlaps(a, b, ta, tb) for a, b, _ in spans for ta, tb in taken):
            continue
        taken.extend((a, b) for a, b, _ in spans)
        edits.extend(spans)
        applied += 1
    for start, end, content in sorted(edits, key=lambda e: (e[0], e[1]), reverse=True):
        text = text[:start] + content + text[end:]
    return text, applied


def _overlaps(a: int, b: int, c: int, d: int) -> bool:
    """Do the edits [a, b) and [c, d) conflict? (Two insertions conflict at the same point.)"""
    if a == b and c == d:
        return a == c
    if a == b:
        return c < a < d
    if c == d:
        return a < c < b
    return a < d and c < b


class _Offsets:
    """1-based (row, character column) -> offset in the text (rows as Python counts them)."""

    def __init__(self, text: str) -> None:
        from gradwarden.lsp.positions import split_lines

        self.starts = [0]
        for line in split_lines(text, keepends=True):
            self.starts.append(self.starts[-1] + len(line))
        self.length = len(text)

    def of(self, row: int, column: int) -> int:
        if row - 1 >= len(self.starts) - 1:
            return self.length
        start = self.starts[max(row - 1, 0)]
        end = self.starts[row] if row < len(self.starts) else self.length
        return min(start + max(column - 1, 0), end)


def warm_up() -> bool:
    """Import the engine and touch its tables, so that the first real request is fast."""
    diagnose("import torch\nx = torch.zeros(2, requires_grad=True)\ny = x.sigmoid()\ny.sum().backward()\n",
             "<warm-up>")
    return True


def trim() -> bool:
    """Drop what a worker keeps for quick answers (incremental analyzers, the fixer's parsed
    document) and give the memory back; sent to a worker that has been idle for a while."""
    import gc

    _ANALYZERS.clear()
    module = sys.modules.get("gradwarden.fixes")
    cache = getattr(module, "_CACHE", None) if module else None
    if hasattr(cache, "clear"):
        cache.clear()
    gc.collect()
    return True


def ping() -> str:
    return "pong"


def _pid() -> int:  # for the tests: which worker ran a job
    return os.getpid()


def _niceness() -> int:  # for the tests: the priority the job runs at
    import threading

    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _crash() -> None:  # for the tests: a worker that dies
    import os

    os._exit(3)


def _sleep(seconds: float, started: str = "") -> float:
    """For the tests: a job that runs long in native code (a cancel cannot interrupt it);
    ``started``: a file created when it begins."""
    import time

    if started:
        with open(started, "w") as fh:
            fh.write("started")
    time.sleep(seconds)
    return seconds


def _hold(gate: str, max_wait: float) -> bool:
    """For the tests: a job that runs until the file ``gate`` exists (True) or ``max_wait``
    seconds have passed (False), so that a test decides when it ends instead of guessing a
    duration."""
    import os
    import time

    deadline = time.monotonic() + max_wait
    while not os.path.exists(gate):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


JOBS: Dict[str, Callable[..., Any]] = {
    "diagnose": diagnose,
    "diagnose_incremental": diagnose_incremental,
    "hover_table": hover_table,
    "fix_edits": fix_edits,
    "fix_edits_many": fix_edits_many,
    "fix_all": fix_all,
    "warm_up": warm_up,
    "ping": ping,
    "trim": trim,
    "_crash": _crash,
    "_pid": _pid,
    "_niceness": _niceness,
    "_sleep": _sleep,
    "_hold": _hold,
}

__all__ = ["JOBS", "forbid_torch", "Span"]
