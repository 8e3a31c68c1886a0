"""What hover and code actions answer from: data prepared in the background for a unit's latest
result, so that neither request ever waits for a worker.

- **Quiet-time prefetch** (``schedule``): once a document being edited has been quiet for
  ``PREFETCH_QUIET`` seconds, a worker computes its quick-fix and fix-all edits, then its hover
  table (every version-counter timeline of the text, ``hover_table.py``).
- **On demand** (``prepare_now``): a hover or code action that found nothing prepared for the
  current result starts the same work at once (answering meanwhile from the diagnostics), so
  the next request finds it; files that are only open are prepared this way, never ahead.

All of it runs in the background lane: an edit's analysis preempts it, and the edit cancels it
(``cancel``). Hover tables are kept for the last ``MAX_HOVER_TABLES`` units (tens of kB to a MB
each); fix edits live in ``GradwardenServer.fix_cache``.
"""
from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Dict, Optional, Tuple

from gradwarden.lsp.worker import BACKGROUND, INTERACTIVE, WorkerError

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.analysis import Result
    from gradwarden.lsp.hover_table import HoverTable

log = logging.getLogger("gradwarden.lsp.prefetch")

PREFETCH_QUIET = 0.3  # seconds a document must stay unchanged before its data is prepared
PREFETCH_MAX_CHARS = 1_000_000
MAX_HOVER_TABLES = 4


class Prepared:
    """The hover tables of the last few units, each for one generation (one text), and the
    background tasks that fill them and the fix cache."""

    def __init__(self) -> None:
        self.hover_tables: "OrderedDict[str, Tuple[int, HoverTable]]" = OrderedDict()
        self.timers: Dict[str, asyncio.TimerHandle] = {}
        self.tasks: Dict[str, Tuple[int, "asyncio.Task[None]"]] = {}  # unit -> (generation, task)
        self.tables_built = 0

    def hover_table(self, key: str, generation: int) -> Optional["HoverTable"]:
        found = self.hover_tables.get(key)
        if found is None or found[0] != generation:
            return None
        self.hover_tables.move_to_end(key)
        return found[1]

    def store_hover_table(self, key: str, generation: int, table: "HoverTable") -> None:
        self.hover_tables[key] = (generation, table)
        self.hover_tables.move_to_end(key)
        self.tables_built += 1
        while len(self.hover_tables) > MAX_HOVER_TABLES:
            self.hover_tables.popitem(last=False)

    def ready(self) -> Dict[str, int]:
        """unit -> the generation its hover table is for (serverStatus, tests)."""
        return {k: g for k, (g, _) in self.hover_tables.items()}

    def cancel(self, key: str) -> None:
        timer = self.timers.pop(key, None)
        if timer is not None:
            timer.cancel()
        running = self.tasks.pop(key, None)
        if running is not None and not running[1].done():
            running[1].cancel()

    def forget(self, key: str) -> None:
        self.cancel(key)
        self.hover_tables.pop(key, None)


def preparable(result: "Result") -> bool:
    return not (len(result.snapshot.text) > PREFETCH_MAX_CHARS or result.parse_failed or result.error
                or result.provisional)


def cancel(ls: Any, key: str) -> None:
    """The unit changed: its prefetch is for a text that is gone. Stop it, so that the edit's
    analysis never waits behind it (the worker lives on: its job is cancelled inside it, see
    ``worker.py``). The old scheduling left it running."""
    if ls.pool is not None and not ls.pool.foreground_first:
        return
    ls.prepared.cancel(key)


def schedule(ls: Any, key: str, result: "Result") -> None:
    """After a result of a document being edited: prepare it once it has been quiet for a
    moment. Files that are only open are prepared on demand (``prepare_now``)."""
    st = ls.analysis.units.get(key) if ls.analysis else None
    if st is None or not st.active or not preparable(result):
        return
    old = ls.prepared.timers.pop(key, None)
    if old is not None:
        old.cancel()

    def fire() -> None:
        ls.prepared.timers.pop(key, None)
        prepare_now(ls, key, result)

    ls.prepared.timers[key] = asyncio.get_running_loop().call_later(PREFETCH_QUIET, fire)


def prepare_now(ls: Any, key: str, result: "Result") -> None:
    """Start preparing ``result`` (fix edits, then the hover table) in the background unless it
    is prepared, being prepared, or no longer the unit's current result."""
    analysis, pool = ls.analysis, ls.pool
    if analysis is None or pool is None or analysis.current(key) is not result or not preparable(result):
        return
    running = ls.prepared.tasks.get(key)
    if running is not None and running[0] == result.generation and not running[1].done():
        return
    if ls.prepared.hover_table(key, result.generation) is not None and _fixes_ready(ls, key, result):
        return
    # Background work: preempted by any edit's analysis (the old scheduling ran the fixer's
    # part in the interactive lane, ahead of diagnostics).
    lane = BACKGROUND if pool.foreground_first else INTERACTIVE
    task = asyncio.get_running_loop().create_task(_prepare(ls, key, result, lane))
    ls.prepared.tasks[key] = (result.generation, task)


def _fixes_ready(ls: Any, key: str, result: "Result") -> bool:
    cached = ls.fix_cache.get(key)
    return cached is not None and cached[0] == (result.generation, ls.resolver.generation) and "all" in cached[1]


async def _prepare(ls: Any, key: str, result: "Result", lane: int) -> None:
    from gradwarden.lsp.actions import fix_all_edit, fix_edits_cached

    analysis, snap = ls.analysis, result.snapshot
    try:
        if not _fixes_ready(ls, key, result):
            items = ls.located(result)
            wanted = [(n, fi) for n, item in enumerate(items) if not item.carried
                      for fi in range(len((item.origin or item.diagnostic).fixes))]
            if wanted:
                await fix_edits_cached(ls, result, wanted, lane=lane)
            await fix_all_edit(ls, key, result, lane=lane)
        if analysis.current(key) is result and ls.prepared.hover_table(key, result.generation) is None:
            table = await ls.pool.run("hover_table", snap.text, snap.filename, lane=BACKGROUND, affinity=key)
            if table is not None and analysis.current(key) is result:
                ls.prepared.store_hover_table(key, result.generation, table)
    except (WorkerError, asyncio.CancelledError):
        pass
    except Exception:  # noqa: BLE001
        log.debug("prefetch failed", exc_info=True)
