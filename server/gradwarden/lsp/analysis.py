"""When to analyse, and what to keep: debounce, cancellation of stale analyses, the last good
result, and waiting for the result of a given document state.

A *unit* is what the engine analyses in one go: a text document, or a notebook (its code cells
joined). Every change bumps the unit's *generation* (a server-side counter). Scheduling:

- an isolated edit (nothing changed during the last ``debounce`` seconds) is analysed at once;
  while typing, the analysis waits until ``debounce`` seconds have passed without a change;
- when a newer analysis starts, the running stale one is cancelled (the worker pool kills its
  worker if it keeps running, see ``worker.py``); a stale result is never published;
- a result whose text does not parse (GW001) keeps the last good diagnostics, carried to
  their new rows (``documents.row_mapping``), so half-typed code never wipes the picture;
- ``lintOn = "save"``: changes only carry the previous diagnostics along; saving analyses.
"""
from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from collections import deque
from typing import Any, Callable, Dict, List, Optional, Tuple

from gradwarden.engine.diagnostic import Diagnostic
from gradwarden.lsp.documents import Snapshot, carry_diagnostics, row_mapping
from gradwarden.lsp.worker import DIAGNOSTICS, WorkerCrashed, WorkerError, WorkerPool

log = logging.getLogger("gradwarden.lsp.analysis")

PARSE_ERROR = "GW001"
INCREMENTAL_MAX_CHARS = 1_000_000  # larger texts are analysed in full on every change
CRASH_ATTEMPTS = 3  # tries of one analysis when its worker dies under it


@dataclass
class Result:
    snapshot: Snapshot
    diagnostics: Tuple[Diagnostic, ...] = ()  # the engine's (after noqa), program rows
    carried: Tuple[Diagnostic, ...] = ()  # last good diagnostics moved to this text
    parse_failed: bool = False
    error: Optional[str] = None  # the analysis did not finish (crash, timeout)
    elapsed: float = 0.0
    finished_at: float = field(default_factory=time.monotonic)

    changed_at: float = 0.0  # when the change that produced this state arrived
    provisional: bool = False  # an older state's diagnostics carried to this text (pull, pending)

    @property
    def generation(self) -> int:
        return self.snapshot.generation

    def all(self) -> Tuple[Diagnostic, ...]:
        return self.diagnostics + self.carried


@dataclass(eq=False)
class UnitState:
    key: str
    generation: int = 0
    last_change: float = 0.0
    timer: Optional[asyncio.TimerHandle] = None
    changed_at: Dict[int, float] = field(default_factory=dict)  # generation -> arrival time
    task: Optional["asyncio.Task[None]"] = None
    task_generation: int = -1
    result: Optional[Result] = None
    last_good: Optional[Result] = None
    waiters: List[Tuple[int, "asyncio.Future[Result]"]] = field(default_factory=list)
    closed: bool = False
    active: bool = False  # edited since it was opened (hover and quick-fix data are prepared ahead)
    # (generation, the result it was carried from, the carried result): hover, code actions and
    # pulls asked while an edit's analysis runs share one (the row mapping splits both texts)
    carried: Optional[Tuple[int, Result, Result]] = None


SnapshotFn = Callable[[str, int], Optional[Snapshot]]  # (unit key, generation) -> snapshot
ResultFn = Callable[[str, Result], None]


class AnalysisService:
    def __init__(
        self,
        pool: WorkerPool,
        snapshot_of: SnapshotFn,
        on_result: ResultFn,
        *,
        debounce: float = 0.1,
        lint_on: str = "type",
        timeout: float = 60.0,
    ) -> None:
        self.pool = pool
        self.snapshot_of = snapshot_of
        self.on_result = on_result
        self.debounce = debounce
        self.lint_on = lint_on
        self.timeout = timeout
        self.units: Dict[str, UnitState] = {}
        self.analyses = 0
        self.stale_dropped = 0
        # the last analyses' costs (worker seconds: parse, analysis; the round trip around
        # them is transport and queueing), for serverStatus and benchmarks/bench_lsp.py
        self.timings: "deque[Dict[str, Any]]" = deque(maxlen=500)

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def configure(self, *, debounce: float, lint_on: str, timeout: float) -> None:
        self.debounce, self.lint_on, self.timeout = debounce, lint_on, timeout

    def state(self, key: str) -> UnitState:
        st = self.units.get(key)
        if st is None:
            st = self.units[key] = UnitState(key)
        return st

    # ---- events
    def opened(self, key: str) -> None:
        st = self.state(key)
        st.closed = False
        st.generation += 1
        st.last_change = 0.0
        self._schedule(st, 0.0)

    def changed(self, key: str) -> None:
        st = self.state(key)
        st.generation += 1
        st.active = True
        now = time.monotonic()
        st.changed_at = {st.generation: now}
        quiet = now - st.last_change >= self.debounce and not self._busy(st)
        st.last_change = now
        if self.lint_on == "save":
            self._schedule(st, self.debounce, carry_only=True)
        else:
            self._schedule(st, 0.0 if quiet else self.debounce)

    def saved(self, key: str) -> None:
        st = self.units.get(key)
        if st is None:
            return
        if self.lint_on == "save" or (st.result is None or st.result.generation < st.generation):
            self._schedule(st, 0.0)

    def refresh(self, key: str) -> None:
        """Analyse again now (settings or the engine changed)."""
        st = self.units.get(key)
        if st is not None and not st.closed:
            st.generation += 1
            self._schedule(st, 0.0)

    def closed(self, key: str) -> None:
        st = self.units.pop(key, None)
        if st is None:
            return
        st.closed = True
        if st.timer:
            st.timer.cancel()
        if st.task and not st.task.done():
            st.task.cancel()
        for _, fut in st.waiters:
            if not fut.done():
                fut.cancel()

    def _busy(self, st: UnitState) -> bool:
        return st.task is not None and not st.task.done()

    # ---- results
    def latest(self, key: str) -> Optional[Result]:
        st = self.units.get(key)
        return st.result if st else None

    def current(self, key: str) -> Optional[Result]:
        """The latest result if it is for the unit's current state."""
        st = self.units.get(key)
        if st and st.result and st.result.generation == st.generation:
            return st.result
        return None

    async def wait(self, key: str, *, urgent: bool = False) -> Optional[Result]:
        """The result for the unit's state as it is now. ``urgent``: start the analysis at once
        instead of waiting for the debounce (hover, code actions); else wait for the scheduled
        one (pull diagnostics: the client asks on every change)."""
        st = self.units.get(key)
        if st is None:
            return None
        gen = st.generation
        if st.result is not None and st.result.generation >= gen:
            return st.result
        if self.lint_on == "save" and not urgent:
            return self._carried_result(st, gen)
        fut: "asyncio.Future[Result]" = self.loop.create_future()
        st.waiters.append((gen, fut))
        pending = st.timer is not None or (self._busy(st) and st.task_generation >= gen)
        if urgent or not pending:
            self._schedule(st, 0.0)
        try:
            return await fut
        finally:
            st.waiters = [(g, f) for g, f in st.waiters if f is not fut]

    def provisional(self, key: str) -> Optional[Result]:
        """The last result carried to the unit's current text, marked provisional (what a pull
        request is answered with while the current state's analysis runs); None: no result."""
        st = self.units.get(key)
        if st is None or st.result is None:
            return None
        if st.result.generation >= st.generation:
            return st.result
        carried = self._carried_result(st, st.generation)
        if carried is None or carried is st.result:
            return st.result
        carried.provisional = True
        return carried

    def _carried_result(self, st: UnitState, gen: int) -> Optional[Result]:
        base = st.result
        if st.carried is not None and st.carried[0] == gen and st.carried[1] is base:
            return st.carried[2]
        snap = self.snapshot_of(st.key, gen)
        if snap is None or base is None:
            return base
        mapping = row_mapping(base.snapshot.text, snap.text)
        carried = tuple(carry_diagnostics(base.all(), mapping))
        result = Result(snap, (), carried, parse_failed=base.parse_failed)
        st.carried = (gen, base, result)
        return result

    # ---- scheduling
    def _schedule(self, st: UnitState, delay: float, carry_only: bool = False) -> None:
        if st.timer is not None:
            st.timer.cancel()
        st.timer = self.loop.call_later(delay, self._fire, st, carry_only)

    def _fire(self, st: UnitState, carry_only: bool) -> None:
        st.timer = None
        if st.closed:
            return
        if carry_only:
            result = self._carried_result(st, st.generation)
            if result is not None and result is not st.result:
                self._store(st, result, keep_base=True)
            return
        if self._busy(st):
            if st.task_generation >= st.generation:
                return
            st.task.cancel()  # type: ignore[union-attr]
        st.task_generation = st.generation
        st.task = self.loop.create_task(self._analyse(st, st.generation))

    async def _analyse(self, st: UnitState, gen: int) -> None:
        snap = self.snapshot_of(st.key, gen)
        if snap is None:
            return
        started = time.monotonic()
        self.analyses += 1
        # Incremental (only the definitions an edit can change) unless the server runs the
        # old scheduling (the benchmark's baseline, see worker.foreground_first_from_env).
        # A text of megabytes (generated, a data dump) is analysed in full: the first
        # incremental pass costs more than a full one, and such a file is rarely edited.
        incremental = self.pool.foreground_first and len(snap.text) <= INCREMENTAL_MAX_CHARS
        job = "diagnose_incremental" if incremental else "diagnose"
        try:
            for attempt in range(CRASH_ATTEMPTS):
                try:
                    diags = await self.pool.run(job, snap.text, snap.filename, lane=DIAGNOSTICS,
                                                timeout=self.timeout, affinity=st.key, may_spawn=st.active,
                                                finish_when_stale=incremental)
                    break
                except WorkerCrashed:
                    # Maybe not this text's fault: the worker was killed, or died before the job
                    # reached it (several workers killed at once each fail one try). A text that
                    # kills every worker it meets fails CRASH_ATTEMPTS times and is reported.
                    if attempt + 1 == CRASH_ATTEMPTS:
                        raise
                    log.info("analysis worker died while analysing %s; retrying", snap.filename)
            info: Dict[str, Any] = {}
            if job == "diagnose_incremental":
                diags, info = diags
            info = dict(info, roundtrip_s=time.monotonic() - started, chars=len(snap.text))
            self.timings.append(info)
        except asyncio.CancelledError:
            self.stale_dropped += 1
            raise
        except WorkerError as exc:
            log.warning("analysis of %s failed: %s", snap.filename, exc)
            result = self._failed(st, snap, str(exc))
        except Exception as exc:  # noqa: BLE001 - never let one document take the server down
            log.exception("analysis of %s failed", snap.filename)
            result = self._failed(st, snap, f"{type(exc).__name__}: {exc}")
        else:
            diags = tuple(diags)
            parse_failed = any(d.code == PARSE_ERROR for d in diags)
            carried: Tuple[Diagnostic, ...] = ()
            base = st.result or st.last_good
            if parse_failed and base is not None:
                # From the previous picture (itself possibly carried): consecutive states differ
                # in one region, which the prefix/suffix mapping follows exactly.
                mapping = row_mapping(base.snapshot.text, snap.text)
                carried = tuple(carry_diagnostics([d for d in base.all() if d.code != PARSE_ERROR], mapping))
            result = Result(snap, diags, carried, parse_failed, elapsed=time.monotonic() - started)
            if not parse_failed:
                st.last_good = result
        if st.closed:
            return
        result.changed_at = st.changed_at.get(gen, started)
        self._store(st, result)
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s (generation %d): analysis %.0f ms, %.0f ms after the change", snap.filename, gen,
                      result.elapsed * 1000, (time.monotonic() - result.changed_at) * 1000)

    def _failed(self, st: UnitState, snap: Snapshot, error: str) -> Result:
        base = st.last_good or st.result
        carried: Tuple[Diagnostic, ...] = ()
        if base is not None:
            carried = tuple(carry_diagnostics(base.all(), row_mapping(base.snapshot.text, snap.text)))
        return Result(snap, (), carried, parse_failed=False, error=error)

    def _store(self, st: UnitState, result: Result, keep_base: bool = False) -> None:
        if st.result is not None and st.result.generation > result.generation:
            self.stale_dropped += 1
            return
        if not keep_base:
            st.result = result
        else:
            # carried-only results (lint on save) are published but never become the base
            pass
        for gen, fut in list(st.waiters):
            if gen <= result.generation and not fut.done():
                fut.set_result(result)
        if result.generation < st.generation:
            self.stale_dropped += 1
            return  # a newer state is on its way; never publish a stale picture
        try:
            self.on_result(st.key, result)
        except Exception:  # noqa: BLE001
            log.exception("publishing diagnostics for %s failed", st.key)
