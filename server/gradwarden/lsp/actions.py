"""Code actions: each diagnostic's fixes as ``quickfix`` actions, ``# noqa`` for one line, and
``source.fixAll.gradwarden`` (safe fixes only).

Edits come from the fixer (``gradwarden.fixes.edits_for`` / ``fix_source``) when it is
installed, else from the edits the engine attached to each Fix; they are computed in a worker
and returned as ``WorkspaceEdit``s against the document versions they were computed for.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as lsp

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Span
from gradwarden.lsp.analysis import PARSE_ERROR, Result
from gradwarden.lsp.convert import (
    FIX_ALL_KIND,
    ClientFeatures,
    kind_matches,
    minimal_edit,
    ranges_overlap,
    same_diagnostic,
    text_edit,
    workspace_edit,
)
from gradwarden.lsp.documents import Located, Program, edits_to_cells
from gradwarden.lsp.hover import _comment_start
from gradwarden.lsp.positions import index_for, split_lines
from gradwarden.lsp.worker import INTERACTIVE, WorkerError

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.server import GradwardenServer

log = logging.getLogger("gradwarden.lsp.actions")

QUICKFIX = "quickfix"
APPLY_EDIT_COMMAND = "gradwarden.applyWorkspaceEdit"
APPLY_FIX_COMMAND = "gradwarden.applyFix"


# --------------------------------------------------------------------------- noqa
def noqa_edit(lines: Sequence[str], row: int, code: str) -> Optional[Edit]:
    """The edit that adds ``code`` to the ``# noqa`` of ``row`` (1-based): extends an existing
    ``# noqa: A, B`` or appends ``  # noqa: CODE``; a backslash-continued statement gets it on
    its last line. None when a bare ``# noqa`` already silences everything there."""
    from gradwarden.noqa import ALL, noqa_codes_on_line

    target = row
    while 1 <= target < len(lines) and _continues(lines[target - 1]):
        target += 1
    if not 1 <= target <= len(lines):
        return None
    line = lines[target - 1]
    existing = noqa_codes_on_line(line[_comment_start(line) or len(line):])
    if existing is ALL:
        return None
    if existing and code.upper() in existing:  # type: ignore[operator]
        return None
    if existing:
        from gradwarden.noqa import _LINE_RE  # the same grammar that reads it back

        hash_at = _comment_start(line) or 0
        for m in _LINE_RE.finditer(line, hash_at):
            if m.group("codes"):
                end = m.end("codes")
                return Edit(Span(target, end + 1, target, end + 1), f", {code}")
    stripped = line.rstrip()
    return Edit(Span(target, len(stripped) + 1, target, len(line) + 1), f"  # noqa: {code}")


def _continues(line: str) -> bool:
    hash_at = _comment_start(line)
    return hash_at is None and line.rstrip("\r\n").endswith("\\")


# --------------------------------------------------------------------------- building actions
@dataclass
class ActionContext:
    """What one code-action request works on."""

    uri: str
    key: str
    result: Result
    items: List[Tuple[int, Located, lsp.Diagnostic]]  # (index in the unit, located, as sent)


def _title(code: str, text: str) -> str:
    return f"gradwarden ({code}): {text}"


def _wrap(action: lsp.CodeAction, features: ClientFeatures) -> Any:
    """Clients without code-action literals get a Command that applies the edit."""
    if features.code_action_literals:
        return action
    if action.edit is None:
        return None
    from lsprotocol.converters import get_converter

    return lsp.Command(title=action.title, command=APPLY_EDIT_COMMAND,
                       arguments=[get_converter().unstructure(action.edit)])


async def code_actions(ls: "GradwardenServer", params: lsp.CodeActionParams) -> Optional[List[Any]]:
    """The actions at a range, from the unit's latest result and the edits prepared for it;
    never waits for an analysis. A fix whose edits are not prepared yet is offered lazily where
    the client can resolve it (``codeAction/resolve`` computes the edit when it is picked) and
    prepared in the background meanwhile; other clients get its edits computed now (the fixer
    only, for the diagnostics at the range)."""
    from gradwarden.lsp import prefetch

    uri = params.text_document.uri
    key = ls.unit_of(uri)
    if key is None:
        return None
    only = params.context.only
    want_fix = kind_matches(QUICKFIX, only)
    want_all = kind_matches(FIX_ALL_KIND, only)
    if not (want_fix or want_all):
        return []
    result = ls.latest_for_request(key)
    if result is None:
        return []
    features = ls.features
    sent = params.context.diagnostics or []
    ctx = ActionContext(uri, key, result, [])
    cursor = params.range.start == params.range.end
    line = params.range.start.line
    for n, item, lsp_diag in ls.lsp_items(result, uri):
        if (ranges_overlap(lsp_diag.range, params.range)
                or any(same_diagnostic(lsp_diag, s) for s in sent)
                # a bare cursor (what most clients send) anywhere on a flagged line
                or (cursor and lsp_diag.range.start.line <= line <= lsp_diag.range.end.line)):
            ctx.items.append((n, item, lsp_diag))
    actions: List[Any] = []
    if want_fix:
        wanted = [(n, fi) for n, item, _ in ctx.items if not item.carried
                  for fi in range(len((item.origin or item.diagnostic).fixes))]
        edits = prepared_fix_edits(ls, result, wanted)
        if not _can_resolve(features):
            # A client that cannot resolve gets the edits computed now (the fixer, in the
            # interactive lane: no analysis), as few as asked for.
            edits = await fix_edits_cached(ls, result, wanted)
        for n, item, lsp_diag in ctx.items:
            origin = item.origin or item.diagnostic
            seen = set()
            for fi, fix in enumerate(origin.fixes if not item.carried else ()):
                if (n, fi) not in edits:
                    if fix.title in seen:
                        continue
                    seen.add(fix.title)
                    lazy = _lazy_fix_action(ls, ctx, item, lsp_diag, n, fi, fix)
                    if lazy is not None:
                        actions.append(lazy)
                    continue
                fix_edits_ = edits[(n, fi)]
                if not fix_edits_ or fix.title in seen:
                    continue  # not fixable here, or the same change offered twice (safe and unsafe)
                seen.add(fix.title)
                wedit = program_edits_to_workspace_edit(ls, result.snapshot.program, result.snapshot, fix_edits_)
                if wedit is None:
                    continue
                actions.append(lsp.CodeAction(
                    title=_title(item.diagnostic.code, fix.title),
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diag],
                    is_preferred=True if (fix.preferred and features.is_preferred) else None,
                    edit=wedit,
                ))
            noqa = _noqa_action(ls, ctx, item, lsp_diag)
            if noqa is not None:
                actions.append(noqa)
    explicit_all = bool(only) and any(str(getattr(o, "value", o)).startswith("source") for o in only)
    if want_all and not result.provisional and (explicit_all or any(_has_safe_fix(it) for _, it, _ in ctx.items)):
        fix_all = _prepared_fix_all_action(ls, key, result)
        if fix_all is None and not _fix_all_prepared(ls, key, result):
            if _can_resolve(features):
                fix_all = _lazy_fix_all_action(ls, key, result)
            else:
                await fix_all_edit(ls, key, result)
                fix_all = _prepared_fix_all_action(ls, key, result)
        if fix_all is not None:
            actions.append(fix_all)
    if not _fix_all_prepared(ls, key, result):
        prefetch.prepare_now(ls, key, result)  # for the next request; this one answers now
    return [a for a in (_wrap(a, features) for a in actions) if a is not None]


def prepared_fix_edits(ls: "GradwardenServer", result: Result, wanted: Sequence[Tuple[int, int]]
                       ) -> Dict[Tuple[int, int], Optional[List[Edit]]]:
    """The prepared edits of the wanted (diagnostic index, fix index) pairs of ``result``;
    pairs not prepared yet are left out."""
    cached = ls.fix_cache.get(result.snapshot.key)
    if cached is None or cached[0] != (result.generation, ls.resolver.generation):
        return {}
    return {pair: cached[1][pair] for pair in wanted if pair in cached[1]}


def _can_resolve(features: ClientFeatures) -> bool:
    """Whether actions may be sent without their edit, for ``codeAction/resolve`` to add it."""
    return features.resolve_edit and features.code_action_data and features.code_action_literals


def _lazy_fix_action(ls: "GradwardenServer", ctx: ActionContext, item: Located, lsp_diag: lsp.Diagnostic,
                     n: int, fi: int, fix: Fix) -> Optional[lsp.CodeAction]:
    data = {"key": ctx.key, "generation": ctx.result.generation, "index": n, "fix": fi}
    return lsp.CodeAction(
        title=_title(item.diagnostic.code, fix.title),
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        is_preferred=True if (fix.preferred and ls.features.is_preferred) else None,
        data=data,
    )


def _fix_all_prepared(ls: "GradwardenServer", key: str, result: Result) -> bool:
    cached = ls.fix_cache.get(key)
    return cached is not None and cached[0] == (result.generation, ls.resolver.generation) and "all" in cached[1]


def _prepared_fix_all_action(ls: "GradwardenServer", key: str, result: Result) -> Optional[lsp.CodeAction]:
    if not _fix_all_prepared(ls, key, result):
        return None
    edit, n = ls.fix_cache[key][1]["all"]
    if edit is None or n == 0:
        return None
    return lsp.CodeAction(title=f"gradwarden: Fix all safe fixes ({n})", kind=FIX_ALL_KIND, edit=edit)


def _lazy_fix_all_action(ls: "GradwardenServer", key: str, result: Result) -> Optional[lsp.CodeAction]:
    settings = ls.resolver.for_file(result.snapshot.filename)
    n = sum(1 for d in settings.apply(result.diagnostics) if any(f.safe for f in d.fixes))
    if n == 0:
        return None
    data = {"key": key, "generation": result.generation, "fixAll": True}
    return lsp.CodeAction(title=f"gradwarden: Fix all safe fixes ({n})", kind=FIX_ALL_KIND, data=data)


def _has_safe_fix(item: Located) -> bool:
    return not item.carried and any(f.safe for f in (item.origin or item.diagnostic).fixes)


async def fix_edits_cached(ls: "GradwardenServer", result: Result, wanted: Sequence[Tuple[int, int]],
                           lane: int = INTERACTIVE) -> Dict[Tuple[int, int], Optional[List[Edit]]]:
    """The edits of fix ``fi`` of located diagnostic ``n`` of ``result`` for each wanted pair:
    from the cache the background prefetch fills (``commands.schedule_prefetch``, which asks
    with ``lane=BACKGROUND``), else computed now, all in one worker round trip."""
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


def program_edits_to_workspace_edit(ls: "GradwardenServer", program: Program, snap, edits: Sequence[Edit]
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


def _noqa_action(ls: "GradwardenServer", ctx: ActionContext, item: Located, lsp_diag: lsp.Diagnostic
                 ) -> Optional[lsp.CodeAction]:
    d = item.diagnostic
    if d.code == PARSE_ERROR:
        return None  # a syntax error is fixed by editing, never silenced (noqa cannot)
    text = ctx.result.snapshot.texts.get(item.uri, "")
    lines = split_lines(text)
    edit = noqa_edit(lines, d.span.row, d.code)
    if edit is None:
        return None
    index = index_for(text, ls.features.encoding)
    wedit = workspace_edit({item.uri: [text_edit(edit, index)]}, ctx.result.snapshot.versions, ls.features)
    return lsp.CodeAction(
        title=_title(d.code, f"Disable {d.code} for this line"),
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        edit=wedit,
    )


async def fix_all_edit(ls: "GradwardenServer", key: str, result: Result, lane: int = INTERACTIVE
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


async def _compute_fix_all_edit(ls: "GradwardenServer", key: str, result: Result, lane: int = INTERACTIVE
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


async def _fix_all_notebook(ls: "GradwardenServer", result: Result, diags: Sequence[Diagnostic],
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


async def resolve(ls: "GradwardenServer", action: lsp.CodeAction) -> lsp.CodeAction:
    data = action.data if isinstance(action.data, dict) else None
    if action.edit is not None or data is None:
        return action
    key = data.get("key")
    result = ls.analysis.latest(key) if isinstance(key, str) else None
    if result is None or result.generation != data.get("generation"):
        log.info("code action %r: the document changed since; not resolved", action.title)
        return action
    action.edit = await lazy_edit(ls, result, data)
    if action.edit is None:
        # offered before the fixer had seen the code, and it cannot realise the fix here: the
        # command tells the user so when the action is picked (instead of doing nothing)
        action.command = lsp.Command(title=action.title, command=APPLY_FIX_COMMAND, arguments=[data])
    return action


async def lazy_edit(ls: "GradwardenServer", result: Result, data: Dict[str, Any]) -> Optional[lsp.WorkspaceEdit]:
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
