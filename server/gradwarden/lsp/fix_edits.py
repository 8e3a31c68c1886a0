"""The edits of quick fixes and fix-all, computed by a worker (the fixer) and cached per unit
state in ``fix_cache`` (``context.FixCache``): filled ahead by ``prefetch.py``, read by code
actions (``actions.py``), computed on demand by ``codeAction/resolve`` and the fix commands.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as lsp

from gradwarden.engine.diagnostic import Diagnostic, Edit
from gradwarden.lsp.analysis import Result
from gradwarden.lsp.convert import minimal_edit, text_edit, workspace_edit
from gradwarden.lsp.documents import Program, edits_to_cells
from gradwarden.lsp.positions import index_for
from gradwarden.lsp.worker import INTERACTIVE, WorkerError

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.context import ServerContext

log = logging.getLogger("gradwarden.lsp.fix_edits")


def prepared_fix_edits(ls: "ServerContext", result: Result, wanted: Sequence[Tuple[int, int]]
                       ) -> Dict[Tuple[int, int], Optional[List[Edit]]]:
    """The prepared edits of the wanted (diagnostic index, fix index) pairs of ``result``;
    pairs not prepared yet are left out."""
    cached = ls.fix_cache.get(result.snapshot.key)
    if cached is None or cached[0] != (result.generation, ls.resolver.generation):
        return {}
    return {pair: cached[1][pair] for pair in wanted if pair in cached[1]}


def fix_all_prepared(ls: "ServerContext", key: str, result: Result) -> bool:
    cached = ls.fix_cache.get(key)
    return cached is not None and cached[0] == (result.generation, ls.resolver.generation) and "all" in cached[1]


async def fix_edits_cached(ls: "ServerContext", result: Result, wanted: Sequence[Tuple[int, int]],
                           lane: int = INTERACTIVE) -> Dict[Tuple[int, int], Optional[List[Edit]]]:
    """The edits of fix ``fi`` of located diagnostic ``n`` of ``result`` for each wanted pair:
    from the cache the background preparation fills (``prefetch.py``, which asks with
    ``lane=BACKGROUND``), else computed now, all in one worker round trip."""
    snap = result.snapshot
    stamp = (result.generation, ls.resolver.generation)
    cached = ls.fix_cache.get(snap.key)
    if cached is None or cached[0] != stamp:
        cached = (stamp, {})
        ls.fix_cache[snap.key] = cached
    table = cached[1]
    missing = [pair for pair in wanted if pair not in table]
    if missing:
        items = ls.located(result)
        pairs = []
        for n, fi in missing:
            origin = items[n].origin or items[n].diagnostic
            pairs.append((origin, origin.fixes[fi]))
        try:
            found = await ls.pool.run("fix_edits_many", snap.text, pairs, lane=lane, affinity=snap.key)
        except WorkerError as exc:
            log.warning("computing quick-fix edits failed: %s", exc)
            found = [None] * len(missing)
        for pair, edits in zip(missing, found):
            table[pair] = edits
    return {pair: table.get(pair) for pair in wanted}


def program_edits_to_workspace_edit(ls: "ServerContext", program: Program, snap, edits: Sequence[Edit]
                                    ) -> Optional[lsp.WorkspaceEdit]:
    if program.is_notebook:
        per_cell = edits_to_cells(program, edits)
        if per_cell is None:
            return None
    else:
        per_cell = {snap.uri: list(edits)}
    by_uri: Dict[str, List[lsp.TextEdit]] = {}
    for uri, cell_edits in per_cell.items():
        index = index_for(snap.texts.get(uri, ""), ls.features.encoding)
        by_uri[uri] = [text_edit(e, index) for e in cell_edits]
    return workspace_edit(by_uri, snap.versions, ls.features)


async def fix_all_edit(ls: "ServerContext", key: str, result: Result, lane: int = INTERACTIVE
                       ) -> Tuple[Optional[lsp.WorkspaceEdit], int]:
    """The edit applying every safe fix of the unit's current diagnostics, and how many
    (cached with the quick-fix edits of the same state)."""
    stamp = (result.generation, ls.resolver.generation)
    cached = ls.fix_cache.get(key)
    if cached is not None and cached[0] == stamp and "all" in cached[1]:
        return cached[1]["all"]
    found = await _compute_fix_all_edit(ls, key, result, lane)
    cached = ls.fix_cache.get(key)
    if cached is None or cached[0] != stamp:
        cached = (stamp, {})
        ls.fix_cache[key] = cached
    cached[1]["all"] = found
    return found


async def _compute_fix_all_edit(ls: "ServerContext", key: str, result: Result, lane: int = INTERACTIVE
                                ) -> Tuple[Optional[lsp.WorkspaceEdit], int]:
    snap = result.snapshot
    settings = ls.resolver.for_file(snap.filename)
    diags = [d for d in settings.apply(result.diagnostics) if any(f.safe for f in d.fixes)]
    if not diags:
        return None, 0
    if snap.program.is_notebook:
        return await _fix_all_notebook(ls, result, diags, lane)
    try:
        new_text, n = await ls.pool.run("fix_all", snap.text, diags, False, lane=lane, affinity=key)
    except WorkerError as exc:
        log.warning("fix-all failed: %s", exc)
        return None, 0
    index = index_for(snap.text, ls.features.encoding)
    edit = minimal_edit(snap.text, new_text, index)
    if edit is None or n == 0:
        return None, 0
    return workspace_edit({snap.uri: [edit]}, snap.versions, ls.features), n


async def _fix_all_notebook(ls: "ServerContext", result: Result, diags: Sequence[Diagnostic],
                            lane: int = INTERACTIVE) -> Tuple[Optional[lsp.WorkspaceEdit], int]:
    from gradwarden.lsp.jobs import _overlaps, _Offsets

    snap = result.snapshot
    offsets = _Offsets(snap.text)
    taken: List[Tuple[int, int]] = []
    chosen: List[Edit] = []
    n = 0
    for d in diags:
        fix = next((f for f in d.fixes if f.safe and f.preferred), None) or next((f for f in d.fixes if f.safe), None)
        if fix is None:
            continue
        try:
            edits = await ls.pool.run("fix_edits", snap.text, d, fix, lane=lane, affinity=snap.key)
        except WorkerError:
            continue
        if not edits:
            continue
        spans = [(offsets.of(e.span.row, e.span.column), offsets.of(e.span.end_row, e.span.end_column)) for e in edits]
        if any(_overlaps(a, b, c, e) for a, b in spans for c, e in taken):
            continue
        if edits_to_cells(snap.program, edits) is None:
            continue
        taken.extend(spans)
        chosen.extend(edits)
        n += 1
    if not chosen:
        return None, 0
    return program_edits_to_workspace_edit(ls, snap.program, snap, chosen), n


async def lazy_edit(ls: "ServerContext", result: Result, data: Dict[str, Any]) -> Optional[lsp.WorkspaceEdit]:
    """The edit of a lazily offered action (its ``data``) for ``result``, computed now."""
    if data.get("fixAll"):
        edit, _ = await fix_all_edit(ls, result.snapshot.key, result)
        return edit
    items = ls.located(result)
    try:
        n, fi = int(data["index"]), int(data["fix"])
        item = items[n]
        (item.origin or item.diagnostic).fixes[fi]
    except (KeyError, IndexError, ValueError, TypeError):
        return None
    if item.carried:
        return None
    edits = (await fix_edits_cached(ls, result, [(n, fi)])).get((n, fi))
    if not edits:
        return None
    return program_edits_to_workspace_edit(ls, result.snapshot.program, result.snapshot, edits)
