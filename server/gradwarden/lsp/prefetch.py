"""What hover and code actions answer from: data prepared in the background for a unit's latest
result, so that neither request ever waits for a worker.

- **Quiet-time prefetch** (``schedule``): once a document being edited has been quiet for
  ``PREFETCH_QUIET`` seconds, a worker computes its quick-fix and fix-all edits, then its hover
  table (every version-counter timeline of the text, ``hover_table.py``).
- **On demand** (``prepare_on_request``): a hover or code action that found nothing prepared for
  the current result starts the same work at once (answering meanwhile from the diagnostics), so
  the next request finds it; files that are only open are prepared this way, never ahead. In a
  document being edited, the quiet-time prefetch already scheduled is left to start it.

All of it runs in the background lane: an edit's analysis preempts it, and the edit cancels it
(``cancel``). What is prepared is kept in ``prepared.Prepared`` (hover tables) and the server's
``fix_cache`` (``fix_edits.py``).
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from gradwarden.lsp.fix_edits import fix_all_edit, fix_all_prepared, fix_edits_cached
from gradwarden.lsp.worker import BACKGROUND, INTERACTIVE, WorkerError

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.analysis import Result
    from gradwarden.lsp.context import ServerContext

log = logging.getLogger("gradwarden.lsp.prefetch")

PREFETCH_QUIET = 0.3  # seconds a document must stay unchanged before its data is prepared
PREFETCH_MAX_CHARS = 1_000_000


def preparable(result: "Result") -> bool:
    return not (len(result.snapshot.text) > PREFETCH_MAX_CHARS or result.parse_failed or result.error
                or result.provisional)


def cancel(ls: "ServerContext", key: str) -> None:
    """The unit changed: its prefetch is for a text that is gone. Stop it, so that the edit's
    analysis never waits behind it (the worker lives on: its job is cancelled inside it, see
    ``worker.py``). The old scheduling left it running."""
    if ls.pool is not None and not ls.pool.foreground_first:
        return
    ls.prepared.cancel(key)


def schedule(ls: "ServerContext", key: str, result: "Result") -> None:
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
        ls.prepared.timer_results.pop(key, None)
        prepare_now(ls, key, result)

    ls.prepared.timers[key] = asyncio.get_running_loop().call_later(PREFETCH_QUIET, fire)
    ls.prepared.timer_results[key] = result


def prepare_on_request(ls: "ServerContext", key: str, result: "Result") -> None:
    """A hover or code action found nothing prepared: prepare now, unless the document is being
    edited and its quiet-time prefetch is already scheduled. A request in the short pause
    between two edits would start the fixer's parse just as the next edit's analysis needs the
    cores (the slowest edits of the benchmark came 0.2 s after the previous one)."""
    timer = ls.prepared.timers.get(key)
    if timer is not None and not timer.cancelled() and ls.prepared.timer_results.get(key) is result:
        return  # the timer prepares this very result (another one: e.g. text carried on save)
    prepare_now(ls, key, result)


def prepare_now(ls: "ServerContext", key: str, result: "Result") -> None:
    """Start preparing ``result`` (fix edits, then the hover table) in the background unless it
    is prepared, being prepared, or no longer the unit's current result."""
    analysis, pool = ls.analysis, ls.pool
    if analysis is None or pool is None or analysis.current(key) is not result or not preparable(result):
        return
    stamp = (result.generation, ls.resolver.generation)
    tried = ls.prepared.tasks.get(key)
    if tried is not None and tried[0] == stamp:
        return  # being prepared, or prepared as far as it goes (a failed table is not retried per hover)
    if ls.prepared.hover_table(key, result.generation) is not None and fix_all_prepared(ls, key, result):
        return
    # Background work: preempted by any edit's analysis (the old scheduling ran the fixer's
    # part in the interactive lane, ahead of diagnostics).
    lane = BACKGROUND if pool.foreground_first else INTERACTIVE
    task = asyncio.get_running_loop().create_task(_prepare(ls, key, result, lane))
    ls.prepared.tasks[key] = (stamp, task)


async def _prepare(ls: "ServerContext", key: str, result: "Result", lane: int) -> None:
    analysis, snap = ls.analysis, result.snapshot
    try:
        if not fix_all_prepared(ls, key, result):
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
