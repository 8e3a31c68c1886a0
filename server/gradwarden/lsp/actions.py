"""Code actions: each diagnostic's fixes as ``quickfix`` actions, ``# noqa`` for one line, and
``source.fixAll.gradwarden`` (safe fixes only).

Edits come from the fixer (``gradwarden.fixes.edits_for`` / ``fix_source``) when it is
installed, else from the edits the engine attached to each Fix; they are computed in a worker
and returned as ``WorkspaceEdit``s against the document versions they were computed for.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Tuple

from lsprotocol import types as lsp

from gradwarden.engine.diagnostic import Edit, Fix, Span
from gradwarden.lsp import prefetch
from gradwarden.lsp.analysis import PARSE_ERROR, Result
from gradwarden.lsp.convert import (
    FIX_ALL_KIND,
    ClientFeatures,
    kind_matches,
    ranges_overlap,
    same_diagnostic,
    text_edit,
    workspace_edit,
)
from gradwarden.lsp.documents import Located
from gradwarden.lsp.fix_edits import (
    fix_all_edit,
    fix_all_prepared,
    fix_edits_cached,
    lazy_edit,
    prepared_fix_edits,
    program_edits_to_workspace_edit,
)
from gradwarden.lsp.positions import index_for, split_lines
from gradwarden.noqa import comment_start

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.context import ServerContext

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
    existing = noqa_codes_on_line(line[comment_start(line) or len(line):])
    if existing is ALL:
        return None
    if existing and code.upper() in existing:  # type: ignore[operator]
        return None
    if existing:
        from gradwarden.noqa import _LINE_RE  # the same grammar that reads it back

        hash_at = comment_start(line) or 0
        for m in _LINE_RE.finditer(line, hash_at):
            if m.group("codes"):
                end = m.end("codes")
                return Edit(Span(target, end + 1, target, end + 1), f", {code}")
    stripped = line.rstrip()
    return Edit(Span(target, len(stripped) + 1, target, len(line) + 1), f"  # noqa: {code}")


def _continues(line: str) -> bool:
    hash_at = comment_start(line)
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
    """Clients without code-action literals get a Command that applies the edit (or the
    action's own command: a fix computed when it is picked)."""
    if features.code_action_literals:
        return action
    if action.edit is None:
        return action.command
    from lsprotocol.converters import get_converter

    return lsp.Command(title=action.title, command=APPLY_EDIT_COMMAND,
                       arguments=[get_converter().unstructure(action.edit)])


async def code_actions(ls: "ServerContext", params: lsp.CodeActionParams) -> Optional[List[Any]]:
    """The actions at a range, from the unit's latest result and the edits prepared for it;
    never waits for an analysis, except fix-all asked for by kind (``source.fixAll``, as on
    save), which is computed on the current text. A fix whose edits are not prepared yet is offered lazily where
    the client can resolve it (``codeAction/resolve`` computes the edit when it is picked) and
    prepared in the background meanwhile; other clients get its edits computed now (the fixer
    only, for the diagnostics at the range)."""
    uri = params.text_document.uri
    key = ls.unit_of(uri)
    if key is None:
        return None
    only = params.context.only
    want_fix = kind_matches(QUICKFIX, only)
    want_all = kind_matches(FIX_ALL_KIND, only)
    if not (want_fix or want_all):
        return []
    explicit_all = bool(only) and any(str(getattr(o, "value", o)).startswith("source") for o in only)
    if want_all and explicit_all:
        # fix-all asked for by kind (on save, a menu entry) rewrites the whole document: it
        # must be computed on the text being saved, so it waits for that text's analysis
        result = await ls.wait_result(key, urgent=True)
    else:
        result = ls.latest_for_request(key)
    if result is None:
        return []
    features = ls.features
    from gradwarden.lsp.write_guard import unwritable

    blocked = unwritable(uri)  # a file this user may not write: no edit is offered for it
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
    if blocked is not None:
        return _disabled_actions(ctx, features, blocked) if want_fix else []
    if want_fix:
        wanted = [(n, fi) for n, item, _ in ctx.items if not item.carried
                  for fi in range(len((item.origin or item.diagnostic).fixes))]
        edits = prepared_fix_edits(ls, result, wanted)
        if not _can_resolve(features) and not features.apply_edit:
            # A client that can neither resolve nor apply a server's edit gets the edits
            # computed now (the fixer, in the interactive lane: no analysis), as few as asked
            # for. The others get the action at once: its edit comes when it is picked.
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
    if want_all and not result.provisional and (explicit_all or any(_has_safe_fix(it) for _, it, _ in ctx.items)):
        fix_all = _prepared_fix_all_action(ls, key, result)
        if fix_all is None and not fix_all_prepared(ls, key, result):
            if _can_resolve(features):
                fix_all = _lazy_fix_all_action(ls, key, result)
            elif explicit_all:
                # asked for by kind (fix-all on save, a menu entry): worth the fixer's time now
                await fix_all_edit(ls, key, result)
                fix_all = _prepared_fix_all_action(ls, key, result)
            # else (a cursor's actions, a client that cannot resolve): fix-all appears once
            # prepared; computing it here would run the fixer over the whole file
        if fix_all is not None:
            actions.append(fix_all)
    if not fix_all_prepared(ls, key, result):
        prefetch.prepare_on_request(ls, key, result)  # for the next request; this one answers now
    return [a for a in (_wrap(a, features) for a in actions) if a is not None]


def _disabled_actions(ctx: ActionContext, features: ClientFeatures, reason: str) -> List[Any]:
    """The fixes of a file the user may not write: shown disabled, with the reason, where the
    client shows disabled actions; else none."""
    if not (features.code_action_disabled and features.code_action_literals):
        return []
    out: List[Any] = []
    for _, item, lsp_diag in ctx.items:
        origin = item.origin or item.diagnostic
        for fix in {f.title: f for f in (origin.fixes if not item.carried else ())}.values():
            out.append(lsp.CodeAction(title=_title(item.diagnostic.code, fix.title), kind=lsp.CodeActionKind.QuickFix,
                                      diagnostics=[lsp_diag],
                                      disabled=lsp.CodeActionDisabled(reason=f"the file cannot be written: {reason}")))
    return out


def _can_resolve(features: ClientFeatures) -> bool:
    """Whether actions may be sent without their edit, for ``codeAction/resolve`` to add it."""
    return features.resolve_edit and features.code_action_data and features.code_action_literals


def _lazy_fix_action(ls: "ServerContext", ctx: ActionContext, item: Located, lsp_diag: lsp.Diagnostic,
                     n: int, fi: int, fix: Fix) -> Optional[lsp.CodeAction]:
    """An action whose edit is computed when it is picked: by ``codeAction/resolve`` where the
    client can resolve, else by the ``gradwarden.applyFix`` command it carries (the server
    computes the edit then and sends it with ``workspace/applyEdit``; Emacs/eglot before 1.13
    works so). The fixer parses the whole file: computing every offered fix while the menu
    waits took seconds on a large file."""
    data = {"key": ctx.key, "generation": ctx.result.generation, "index": n, "fix": fi}
    title = _title(item.diagnostic.code, fix.title)
    resolvable = _can_resolve(ls.features)
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[lsp_diag],
        is_preferred=True if (fix.preferred and ls.features.is_preferred) else None,
        data=data if resolvable and ls.features.code_action_data else None,
        command=None if resolvable else lsp.Command(title=title, command=APPLY_FIX_COMMAND, arguments=[data]),
    )


def _prepared_fix_all_action(ls: "ServerContext", key: str, result: Result) -> Optional[lsp.CodeAction]:
    if not fix_all_prepared(ls, key, result):
        return None
    edit, n = ls.fix_cache[key][1]["all"]
    if edit is None or n == 0:
        return None
    return lsp.CodeAction(title=f"gradwarden: Fix all safe fixes ({n})", kind=FIX_ALL_KIND, edit=edit)


def _lazy_fix_all_action(ls: "ServerContext", key: str, result: Result) -> Optional[lsp.CodeAction]:
    settings = ls.resolver.for_file(result.snapshot.filename)
    if not any(any(f.safe for f in d.fixes) for d in settings.apply(result.diagnostics)):
        return None
    data = {"key": key, "generation": result.generation, "fixAll": True}
    # no count: how many fixes apply only the fix run knows (the prepared action says it)
    return lsp.CodeAction(title="gradwarden: Fix all safe fixes", kind=FIX_ALL_KIND, data=data)


def _has_safe_fix(item: Located) -> bool:
    return not item.carried and any(f.safe for f in (item.origin or item.diagnostic).fixes)


def _noqa_action(ls: "ServerContext", ctx: ActionContext, item: Located, lsp_diag: lsp.Diagnostic
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


async def resolve(ls: "ServerContext", action: lsp.CodeAction) -> lsp.CodeAction:
    data = action.data if isinstance(action.data, dict) else None
    if action.edit is not None or data is None:
        return action
    key = data.get("key")
    result = ls.analysis.latest(key) if isinstance(key, str) else None
    if result is None or result.generation != data.get("generation"):
        log.info("code action %r: the document changed since; not resolved", action.title)
        return action
    from gradwarden.lsp.write_guard import unwritable

    if unwritable(result.snapshot.uri) is not None:
        # the file became read-only since the action was offered: the command says why
        action.command = lsp.Command(title=action.title, command=APPLY_FIX_COMMAND, arguments=[data])
        return action
    action.edit = await lazy_edit(ls, result, data)
    if action.edit is None:
        # offered before the fixer had seen the code, and it cannot realise the fix here: the
        # command tells the user so when the action is picked (instead of doing nothing)
        action.command = lsp.Command(title=action.title, command=APPLY_FIX_COMMAND, arguments=[data])
    return action


