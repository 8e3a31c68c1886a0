"""``workspace/executeCommand``: workspace-wide check (with ``$/progress``), fix-all, the runtime
debug run; and the runtime findings merged into a unit's diagnostics.

Commands (arguments in brackets):

- ``gradwarden.checkWorkspace`` [folder URI]: analyse every Python file of the workspace
  folders (config exclusions and .gitignore respected), publish their diagnostics, report
  progress; cancellable. Returns ``{"files", "checked", "diagnostics", "errors", "cancelled"}``.
- ``gradwarden.fixAll`` [document URI]: apply every safe fix through ``workspace/applyEdit``.
- ``gradwarden.applyWorkspaceEdit`` [WorkspaceEdit]: for clients without code-action literals.
- ``gradwarden.applyFix`` [{"key", "generation", "index", "fix"} | {"key", "generation", "fixAll"}]:
  the command of a lazily offered fix that resolved to no edit (the fixer cannot realise it
  here): computes it again and applies it through ``workspace/applyEdit``, or says why not.
- ``gradwarden.debugRun`` [document URI | {"uri", "timeout"}]: run the file under the runtime
  bridge (``gradwarden.runtime``, in the configured interpreter) and show its findings. The
  only way the server ever causes user code to run, and only on this explicit command.
- ``gradwarden.showTimeline`` [document URI | {"uri", "position": {"line", "character"}, "path",
  "html": bool}]: the timeline picture of the finding at ``position`` (else of every finding of
  the document) as one self-contained HTML file, written to ``path`` (default: a file under the
  temporary folder); returns ``{"path", "uri", "findings", "title"}`` and, with ``"html": true``,
  the page itself (the VS Code extension shows it in a webview).
- ``gradwarden.serverStatus``: versions, workers, open documents (for bug reports and tests).

The debug run marks the file's diagnostics in place (``verdicts``): ``[confirmed] ...`` with the
run's evidence, ``[not reproduced] ...``, ``[not reached] ...``, and what only the run saw as
diagnostics of their own; the code lens (``lens``) then says what the run found.
"""
from __future__ import annotations

import asyncio
import importlib
import logging
import os
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from lsprotocol import types as lsp

from gradwarden.lsp.documents import display_name, locate, uri_key, uri_to_path
from gradwarden.lsp.worker import BACKGROUND, WorkerError

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.analysis import Result
    from gradwarden.lsp.context import ServerContext

log = logging.getLogger("gradwarden.lsp.commands")

CHECK_WORKSPACE = "gradwarden.checkWorkspace"
FIX_ALL = "gradwarden.fixAll"
APPLY_EDIT = "gradwarden.applyWorkspaceEdit"
APPLY_FIX = "gradwarden.applyFix"
DEBUG_RUN = "gradwarden.debugRun"
SHOW_TIMELINE = "gradwarden.showTimeline"
STATUS = "gradwarden.serverStatus"

_cancellers: Dict[str, Any] = {}


async def apply_workspace_edit(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    from lsprotocol.converters import get_converter

    if not args:
        raise ValueError("gradwarden.applyWorkspaceEdit needs a WorkspaceEdit")
    edit = get_converter().structure(args[0], lsp.WorkspaceEdit)
    for uri in _edited_uris(edit):
        refused = _refuse_unwritable(ls, uri)
        if refused is not None:
            return refused
    res = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="gradwarden"))
    return {"applied": bool(res and res.applied)}


def _edited_uris(edit: "lsp.WorkspaceEdit") -> List[str]:
    uris = list((edit.changes or {}).keys())
    for change in edit.document_changes or ():
        doc = getattr(change, "text_document", None)
        if doc is not None:
            uris.append(doc.uri)
    return uris


def _refuse_unwritable(ls: "ServerContext", uri: str) -> Optional[Dict[str, Any]]:
    """An edit of a file this user may not write is never sent (lsp/write_guard.py): one clear
    message, and the command's answer says why."""
    from gradwarden.lsp.write_guard import refusal, unwritable

    reason = unwritable(uri)
    if reason is None:
        return None
    ls.show(refusal(uri, reason), lsp.MessageType.Error)
    return {"applied": False, "reason": f"not writable: {reason}"}


def server_status(ls: "ServerContext") -> Dict[str, Any]:
    import sys

    from gradwarden import __version__

    analysis = ls.analysis
    return {
        "version": __version__,
        "python": sys.version.split()[0],
        "pid": os.getpid(),
        "torch_imported": "torch" in sys.modules,
        "diagnostics": "pull" if ls.pull else "push",
        "encoding": ls.features.encoding,
        "workers": ls.pool.stats() if ls.pool else None,
        "documents": sorted(analysis.units) if analysis else [],
        # units whose current state has no result yet (an analysis is scheduled or running)
        "pending": sorted(k for k, st in analysis.units.items()
                          if st.result is None or st.result.generation < st.generation) if analysis else [],
        "analyses": analysis.analyses if analysis else 0,
        "stale_dropped": analysis.stale_dropped if analysis else 0,
        "options": {k: (list(v) if isinstance(v, tuple) else v) for k, v in ls.options.summary().items()},
        "settings_generation": ls.resolver.generation,
        "pull_refreshes": ls.pull_refreshes,
        # unit -> the generation its hover table is for; hovers answered (never waiting)
        "hover_tables": ls.prepared.ready(),
        "generations": {k: st.generation for k, st in analysis.units.items()} if analysis else {},
        "hovers": ls.hovers_answered,
        # unit -> the generation whose quick-fix and fix-all edits are prepared
        "fixes_prepared": {k: stamp[0] for k, (stamp, table) in ls.fix_cache.items()
                           if stamp[1] == ls.resolver.generation and "all" in table},
        # the last analyses: worker seconds (parse, analysis), round trip, definitions re-analysed
        "timings": list(analysis.timings) if analysis else [],
    }


# --------------------------------------------------------------------------- progress
class Progress:
    """``$/progress`` when the client supports it (server-created token), silent otherwise."""

    def __init__(self, ls: "ServerContext", title: str, token: Optional[Any] = None) -> None:
        self.ls = ls
        self.title = title
        self.token = token
        self.enabled = token is not None or ls.features.work_done_progress
        self.last = 0.0

    async def begin(self, message: str = "") -> None:
        if not self.enabled:
            return
        if self.token is None:
            self.token = f"gradwarden-{uuid.uuid4()}"
            try:
                await asyncio.wait_for(self.ls.work_done_progress.create_async(self.token), 5.0)
            except Exception as exc:  # noqa: BLE001 - no progress then
                log.info("progress not available: %s", exc)
                self.enabled = False
                return
        self.ls.work_done_progress.begin(self.token, lsp.WorkDoneProgressBegin(
            title=self.title, cancellable=True, message=message or None, percentage=0))

    def report(self, message: str, percentage: int, force: bool = False) -> None:
        if not self.enabled or self.token is None:
            return
        now = time.monotonic()
        if not force and now - self.last < 0.1:
            return
        self.last = now
        self.ls.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(
            message=message, percentage=max(0, min(100, percentage)), cancellable=True))

    def end(self, message: str) -> None:
        if not self.enabled or self.token is None:
            return
        self.ls.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))

    @property
    def cancelled(self) -> bool:
        if self.token is None:
            return False
        token = str(self.token)
        fut = self.ls.work_done_progress.tokens.get(self.token)
        return token in self.ls.progress_cancelled or bool(fut is not None and fut.cancelled())


def cancel_token(ls: "ServerContext", token: str) -> None:
    cancel = _cancellers.get(token)
    if cancel is not None:
        try:
            cancel()
        except Exception:  # noqa: BLE001
            log.exception("cancelling %s failed", token)


def cancel_all(ls: "ServerContext") -> None:
    for token in list(_cancellers):
        cancel_token(ls, token)


# --------------------------------------------------------------------------- workspace check
def _folders(ls: "ServerContext", args: Sequence[Any]) -> List[Path]:
    if args and isinstance(args[0], str):
        path = uri_to_path(args[0]) or args[0]
        return [Path(path)]
    folders = [uri_to_path(f.uri) for f in ls.workspace.folders.values()]
    out = [Path(f) for f in folders if f]
    if not out and ls.workspace.root_path:
        out = [Path(ls.workspace.root_path)]
    return out or [ls.resolver.root]


async def run_workspace_check(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    from gradwarden.discovery import discover
    from gradwarden.engine.front.source import decode_source
    from gradwarden.lsp.convert import to_lsp_diagnostic
    from gradwarden.lsp.positions import index_for

    assert ls.pool is not None
    progress = Progress(ls, "gradwarden: checking the workspace")
    await progress.begin("finding files")
    files: List[Path] = []
    for folder in _folders(ls, args):
        settings = ls.resolver.for_file(str(folder / "__init__.py"))
        found = await asyncio.get_running_loop().run_in_executor(
            None, lambda f=folder, s=settings: discover([f], exclude=s.exclude, respect_gitignore=s.respect_gitignore))
        files.extend(found.files)
    open_paths = {uri_to_path(st_key) or st_key for st_key in (ls.analysis.units if ls.analysis else {})}
    files = [f for f in files if str(f) not in open_paths]
    total = len(files)
    summary: Dict[str, Any] = {"files": total, "checked": 0, "diagnostics": 0, "errors": 0, "cancelled": False}
    published_now = set()
    limit = asyncio.Semaphore(max(1, ls.pool.size - 1))
    stop = asyncio.Event()
    token_key = str(progress.token) if progress.token is not None else f"check-{uuid.uuid4()}"
    _cancellers[token_key] = stop.set

    async def one(path: Path) -> None:
        if stop.is_set() or progress.cancelled:
            stop.set()
            return
        async with limit:
            if stop.is_set():
                return
            try:
                data = await asyncio.get_running_loop().run_in_executor(None, path.read_bytes)
                diags = await ls.pool.run("diagnose", data, str(path), lane=BACKGROUND, kill_after=None)
            except (OSError, WorkerError) as exc:
                summary["errors"] += 1
                log.info("workspace check: %s: %s", path, exc)
                return
            finally:
                summary["checked"] += 1
                progress.report(f"{summary['checked']}/{total} files", int(100 * summary["checked"] / max(total, 1)))
        settings = ls.resolver.for_file(str(path))
        diags = settings.apply(diags)
        uri = path.resolve().as_uri()
        if uri_key(uri) in (ls.analysis.units if ls.analysis else {}):
            return  # opened meanwhile: the live analysis speaks for it
        text, _ = decode_source(data)
        index = index_for(text or "", ls.features.encoding)
        items = locate(_plain(text or ""), uri, diags)
        lsp_diags = [to_lsp_diagnostic(it, index, ls.features) for it in items]
        summary["diagnostics"] += len(lsp_diags)
        if lsp_diags or uri in ls.workspace_published:
            ls._publish(uri, lsp_diags, None)
        if lsp_diags:
            published_now.add(uri)

    try:
        await asyncio.gather(*(one(p) for p in files))
    finally:
        _cancellers.pop(token_key, None)
    for uri in ls.workspace_published - published_now:
        if not stop.is_set() and uri_key(uri) not in (ls.analysis.units if ls.analysis else {}):
            ls._publish(uri, [], None)
    ls.workspace_published = published_now | (ls.workspace_published if stop.is_set() else set())
    summary["cancelled"] = stop.is_set()
    text = (("cancelled: " if stop.is_set() else "") +
            f"{summary['checked']} of {total} files checked, {summary['diagnostics']} diagnostic(s)"
            + (f", {summary['errors']} file(s) could not be checked" if summary["errors"] else ""))
    summary["summary"] = text
    progress.end(text)
    return summary


def _plain(text: str):
    from gradwarden.lsp.documents import Program

    return Program(text)


# --------------------------------------------------------------------------- fix all (command)
async def run_fix_all(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    from gradwarden.lsp.fix_edits import fix_all_edit

    uri = _uri_arg(args)
    key = ls.unit_of(uri) if uri else None
    if key is None:
        raise ValueError(f"{FIX_ALL}: {uri!r} is not an open document")
    refused = _refuse_unwritable(ls, uri)  # type: ignore[arg-type]
    if refused is not None:
        return {**refused, "fixes": 0}
    result = await ls.wait_result(key, urgent=True)
    if result is None:
        return {"applied": False, "fixes": 0}
    edit, n = await fix_all_edit(ls, key, result)
    if edit is None:
        return {"applied": False, "fixes": 0}
    res = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="gradwarden: fix all"))
    return {"applied": bool(res and res.applied), "fixes": n}


async def run_apply_fix(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    from gradwarden.lsp.fix_edits import lazy_edit

    data = args[0] if args and isinstance(args[0], dict) else None
    key = data.get("key") if data else None
    result = ls.analysis.latest(key) if isinstance(key, str) and ls.analysis else None
    if result is None or result.generation != data.get("generation"):
        ls.show("gradwarden: the document changed since this fix was offered; ask for the fixes again",
                lsp.MessageType.Info)
        return {"applied": False, "reason": "changed"}
    refused = _refuse_unwritable(ls, result.snapshot.uri)
    if refused is not None:
        return refused
    edit = await lazy_edit(ls, result, data)
    if edit is None:
        ls.show("gradwarden: this fix cannot be applied to the code as it is here; edit it by hand",
                lsp.MessageType.Info)
        return {"applied": False, "reason": "no edit"}
    res = await ls.workspace_apply_edit_async(lsp.ApplyWorkspaceEditParams(edit=edit, label="gradwarden"))
    return {"applied": bool(res and res.applied)}


# The output of the debug runs goes to one folder per server process, created with the first
# run and removed when the server stops (shutdown/exit, or the interpreter's exit): the log
# path a run returns stays readable while the session lasts, and no run leaves a folder behind.
_debug_logs: Dict[str, Any] = {"dir": None, "runs": 0, "timelines": None}  # this server's temporary folders


def _debug_log_path() -> str:
    import atexit
    import tempfile

    if _debug_logs["dir"] is None or not os.path.isdir(_debug_logs["dir"]):
        _debug_logs["dir"] = tempfile.mkdtemp(prefix="gradwarden-debug-")
        atexit.register(remove_debug_logs)
    _debug_logs["runs"] += 1
    return os.path.join(_debug_logs["dir"], f"run-{_debug_logs['runs']}.log")


def remove_debug_logs() -> None:
    """Remove the debug runs' output folder and the timeline pages (called when the server stops)."""
    import shutil

    for key in ("dir", "timelines"):
        folder, _debug_logs[key] = _debug_logs[key], None
        if folder:
            shutil.rmtree(folder, ignore_errors=True)


def _uri_arg(args: Sequence[Any]) -> Optional[str]:
    if not args:
        return None
    first = args[0]
    if isinstance(first, str):
        return first
    if isinstance(first, dict):
        value = first.get("uri") or (first.get("textDocument") or {}).get("uri")
        return value if isinstance(value, str) else None
    return None


def forget_unit(ls: "ServerContext", key: str) -> None:
    """A document closed: what was prepared for it goes. The verdicts of its last debug run
    stay (a reload, ``:edit`` in Neovim, closes and reopens it: they are carried to the text it
    reopens with), for the KEEP_RUNS most recently run units."""
    ls.prepared.forget(key)
    ls.fix_cache.pop(key, None)
    ls.lens_answered.pop(key, None)
    for table in (ls.runtime_findings, ls.debug_summaries):
        while len(table) > KEEP_RUNS:
            table.pop(next(iter(table)))


KEEP_RUNS = 64  # units whose last debug run's verdicts are kept after they are closed


def refresh_lenses(ls: "ServerContext") -> None:
    """Ask the client to ask for code lenses again (their titles follow the debug run)."""
    if not ls.features.code_lens_refresh:
        return
    try:
        ls.workspace_code_lens_refresh(None)
    except Exception:  # noqa: BLE001 - a nicety
        log.debug("code lens refresh failed", exc_info=True)


# --------------------------------------------------------------------------- code lens, timeline
async def code_lenses(ls: "ServerContext", uri: str) -> List[lsp.CodeLens]:
    """The "Confirm with a debug run" lens of a Python file (``lens.code_lenses``), from the
    latest diagnostics, at once (a lens request never waits for an analysis: when one changes
    what the lens would say, ``lenses_after_result`` asks the client to ask again)."""
    from gradwarden.lsp.lens import code_lenses as lenses_of

    key = ls.unit_of(uri)
    if key is None or ls.is_notebook(key) or ls.analysis is None:
        return []
    result = ls.latest_for_request(key)
    if result is None:
        ls.lens_answered[key] = None
        return []
    diags = [d for _, _, d in ls.lsp_items(result, uri)]
    diags = merge_runtime(diags, runtime_diagnostics(ls, key, result).get(uri, []))
    lenses = lenses_of(uri, diags, last_run=ls.debug_summaries.get(key), running=key in ls.debug_running)
    ls.lens_answered[key] = _lens_signature(ls, result)
    log.debug("code lens of %s: %s", display_name(uri), [lens.command.title for lens in lenses])
    return lenses


def _lens_signature(ls: "ServerContext", result: "Result") -> Tuple[int, int]:
    """What the lens depends on: how many findings it counts, and the first one's row."""
    from gradwarden.lsp.lens import PARSE_ERROR

    rows = [it.diagnostic.span.row for it in ls.located(result) if it.diagnostic.code != PARSE_ERROR]
    return (len(rows), min(rows) if rows else 0)


def lenses_after_result(ls: "ServerContext", key: str, result: "Result") -> None:
    """A new analysis result: if the lens last answered for the unit would now say something
    else (a finding more or less, or moved), the client is asked to ask again."""
    if key not in ls.lens_answered or not ls.features.code_lens_refresh:
        return
    signature = _lens_signature(ls, result)
    if ls.lens_answered[key] != signature:
        ls.lens_answered[key] = signature
        refresh_lenses(ls)


async def show_timeline(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    """Write the timeline page of the finding at the given position (else of the whole
    document) and return where it is (``timeline_view.timeline_page``)."""
    from gradwarden.lsp.positions import index_for
    from gradwarden.lsp.timeline_view import timeline_page

    uri = _uri_arg(args)
    key = ls.unit_of(uri) if uri else None
    if uri is None or key is None:
        raise ValueError(f"{SHOW_TIMELINE}: give the URI of an open Python file or notebook cell")
    options = args[0] if args and isinstance(args[0], dict) else {}
    result = ls.latest_for_request(key) or await ls.wait_result(key)
    if result is None:
        raise ValueError(f"{SHOW_TIMELINE}: {uri} has not been analysed yet")
    snap = result.snapshot
    position = None
    pos = options.get("position") if isinstance(options.get("position"), dict) else None
    if pos is not None and isinstance(pos.get("line"), int) and isinstance(pos.get("character"), int):
        text = snap.texts.get(uri) or next((t for u, t in snap.texts.items() if uri_key(u) == uri_key(uri)), "")
        row, col = index_for(text, ls.features.encoding).from_lsp(pos["line"], pos["character"])
        prow = snap.program.to_program(uri, row) if snap.program.is_notebook else row
        position = (prow, col) if prow is not None else None
    verdicts = [v for v, _ in carried_verdicts(ls, key, result)]
    html, n, title = timeline_page(uri=uri, filename=snap.filename, display=display_name(snap.uri),
                                   program=snap.program, items=ls.located(result), verdicts=verdicts,
                                   position=position)
    target = options.get("path") if isinstance(options.get("path"), str) and options.get("path") else None
    out = Path(target).expanduser() if target else _timeline_file(snap.filename, position)
    try:
        await asyncio.get_running_loop().run_in_executor(None, _write_text, out, html)
    except OSError as exc:
        raise RuntimeError(f"{SHOW_TIMELINE}: cannot write {out}: {exc.strerror or exc}") from exc
    answer: Dict[str, Any] = {"path": str(out), "uri": out.resolve().as_uri(), "findings": n, "title": title}
    if options.get("html") is True:
        answer["html"] = html
    return answer


def _timeline_file(filename: str, position: Optional[Tuple[int, int]]) -> Path:
    """<temp>/gradwarden-timelines-<uid>/<stem>-<hash of the path>[-line<N>].html: one file per
    document and line, rewritten each time (two files of one name in different folders differ)."""
    import hashlib
    import tempfile

    stem = Path(filename).stem or "document"
    digest = hashlib.sha1(filename.encode("utf-8", "replace")).hexdigest()[:8]
    if _debug_logs["timelines"] is None or not os.path.isdir(_debug_logs["timelines"]):
        # this server's own folder, removed when it stops (remove_debug_logs)
        import atexit

        _debug_logs["timelines"] = tempfile.mkdtemp(prefix="gradwarden-timelines-")
        atexit.register(remove_debug_logs)
    folder = Path(_debug_logs["timelines"])
    suffix = f"-line{position[0]}" if position else ""
    return folder / f"{stem}-{digest}{suffix}.html"


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# --------------------------------------------------------------------------- runtime bridge
def merge_runtime(static: List[lsp.Diagnostic], runtime_diags: List[lsp.Diagnostic]) -> List[lsp.Diagnostic]:
    """The static diagnostics with the last debug run's verdicts: a verdict on a static
    diagnostic (``[confirmed]``, ``[not reproduced]``, ``[not reached]``) takes its place (same
    code and start; its ``data`` kept, for code actions) and is dropped once that diagnostic is
    gone (fixed since the run); what only the run saw is added."""
    def key(d: lsp.Diagnostic) -> tuple:
        return (d.code, d.range.start.line, d.range.start.character)

    verdicts = {}
    extra = []
    for d in runtime_diags:
        if isinstance(d.data, dict) and d.data.get("verdict") in ("confirmed", "not reproduced", "not reached"):
            verdicts[key(d)] = d
        else:
            extra.append(d)
    out = []
    for d in static:
        v = verdicts.get(key(d))
        if v is None:
            out.append(d)
            continue
        out.append(lsp.Diagnostic(range=v.range, message=v.message, severity=v.severity, code=v.code,
                                  code_description=v.code_description, source=v.source,
                                  related_information=v.related_information, data=d.data, tags=v.tags))
    keys = {key(d) for d in out}
    for d in extra:
        d.data = None  # not one of the unit's diagnostics: code actions have nothing to look up
    return out + [d for d in extra if key(d) not in keys]


def runtime_diagnostics(ls: "ServerContext", key: str, result: "Result") -> Dict[str, List[lsp.Diagnostic]]:
    """The verdicts of the last debug run of this unit, carried to the current text."""
    out: Dict[str, List[lsp.Diagnostic]] = {}
    for verdict, item in carried_verdicts(ls, key, result):
        from gradwarden.lsp.convert import to_lsp_diagnostic
        from gradwarden.lsp.positions import index_for

        index = index_for(result.snapshot.texts.get(item.uri, ""), ls.features.encoding)
        d = to_lsp_diagnostic(item, index, ls.features)
        d.source = verdict.source
        d.data = {"verdict": verdict.status}
        out.setdefault(item.uri, []).append(d)
    return out


def carried_verdicts(ls: "ServerContext", key: str, result: "Result") -> List[Tuple[Any, Any]]:
    """(verdict moved to the current rows, its located diagnostic) for the unit's last run."""
    found = ls.runtime_findings.get(key)
    if not found:
        return []
    base, verdicts = found
    from dataclasses import replace

    from gradwarden.lsp.documents import carry_diagnostics, row_mapping

    mapping = row_mapping(base.snapshot.text, result.snapshot.text)
    snap = result.snapshot
    out = []
    for v in verdicts:
        moved = carry_diagnostics([v.diagnostic], mapping)
        if not moved:
            continue
        for item in locate(snap.program, snap.uri, moved):
            out.append((replace(v, diagnostic=moved[0]), item))
    return out


async def run_debug(ls: "ServerContext", args: Sequence[Any]) -> Dict[str, Any]:
    """Run the document's file under the runtime bridge (``gradwarden.runtime.DebugSession``):
    the configured interpreter (``interpreter`` setting; default: the server's own) runs it in a
    child process; nothing of it runs here, and torch is never imported here. Runtime-only
    findings are published with the file's diagnostics (source "gradwarden (runtime)"); the
    static ones' verdicts come back in the result."""
    uri = _uri_arg(args)
    key = ls.unit_of(uri) if uri else None
    if uri is None or key is None:
        raise ValueError(f"{DEBUG_RUN}: give the URI of an open Python file")
    if ls.is_notebook(key):
        raise ValueError(f"{DEBUG_RUN}: notebooks are run by their kernel; debug runs take .py files")
    path = uri_to_path(uri)
    if path is None:
        raise ValueError(f"{DEBUG_RUN}: only files on disk can be run ({uri})")
    if key in ls.debug_running:
        ls.show(f"gradwarden: a debug run of {os.path.basename(path)} is already running", lsp.MessageType.Info)
        return {"uri": uri, "status": "running", "summary": f"a debug run of {os.path.basename(path)} is already running"}
    try:
        runtime = importlib.import_module("gradwarden.runtime")
        session_cls = runtime.DebugSession
        options_cls = runtime.DebugOptions
        target_cls = runtime.Target
    except (ImportError, AttributeError) as exc:
        message = ("gradwarden.debugRun needs the runtime bridge (gradwarden.runtime with DebugSession), "
                   f"which this installation does not have ({exc}). Static diagnostics keep working.")
        ls.show(message, lsp.MessageType.Error)
        raise RuntimeError(message) from exc
    options = args[0] if args and isinstance(args[0], dict) else {}
    kwargs: Dict[str, Any] = {"output": "log"}
    if ls.options.interpreter:
        kwargs["python"] = ls.options.interpreter[0]
    device = options.get("device")
    if isinstance(device, str) and device in ("auto", "cpu", "cuda"):
        kwargs["device"] = device
    timeout = options.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        kwargs["timeout"] = float(timeout)
    kwargs["log_path"] = _debug_log_path()
    root = ls.resolver.root if str(Path(path)).startswith(str(ls.resolver.root)) else Path(path).parent
    progress = Progress(ls, f"gradwarden: debug run of {os.path.basename(path)}")
    await progress.begin("starting")
    loop = asyncio.get_running_loop()

    def on_progress(p: Any) -> None:
        progress.report(str(getattr(p, "message", "")) or str(getattr(p, "stage", "")), 50, force=True)

    try:
        session = session_cls(target_cls.script(path, cwd=str(root)), options_cls(**kwargs),
                              on_progress=on_progress, loop=loop)
        session.start()
    except Exception as exc:  # noqa: BLE001 - DebugError and bad options: tell the user
        progress.end("could not start")
        message = f"gradwarden: the debug run could not start: {exc}"
        ls.show(message, lsp.MessageType.Error)
        raise RuntimeError(message) from exc
    token = str(progress.token) if progress.token is not None else f"debug-{uuid.uuid4()}"
    _cancellers[token] = session.cancel
    ls.debug_running.add(key)
    refresh_lenses(ls)
    try:
        outcome = await session.wait_async()
    except asyncio.CancelledError:  # $/cancelRequest from the client
        session.cancel()
        progress.end("cancelled")
        raise
    finally:
        _cancellers.pop(token, None)
        ls.debug_running.discard(key)
    from gradwarden.lsp.verdicts import counts as verdict_counts
    from gradwarden.lsp.verdicts import verdicts_of

    findings = list(getattr(outcome, "findings", []) or [])
    runtime_only = [f for f in findings if getattr(f, "status", "") == getattr(runtime, "RUNTIME_ONLY", "runtime-only")]
    # every diagnostic of the file with the run's verdict (marked in place: see merge_runtime),
    # and what only the run saw
    here = verdicts_of(findings, path)
    result = ls.analysis.latest(key) if ls.analysis else None
    if result is not None:
        ls.runtime_findings.pop(key, None)  # the most recent run last (forget_unit keeps the newest)
        ls.runtime_findings[key] = (result, here)
        ls.runtime_generation += 1  # pulled diagnostics must not answer "unchanged" now
        current = ls.analysis.current(key)
        if current is not None and not ls.pull:
            ls.publish(key, current)
        elif ls.pull and ls.features.diagnostic_refresh:
            ls.workspace_diagnostic_refresh(None)
    if getattr(outcome, "status", None) not in ("error", "cancelled"):
        ls.debug_summaries.pop(key, None)
        ls.debug_summaries[key] = verdict_counts(here)
    refresh_lenses(ls)
    counts = getattr(outcome, "counts", None) or {}
    counts = counts() if callable(counts) else counts
    confirmed = counts.get(getattr(runtime, "CONFIRMED", "confirmed"), 0)
    not_confirmed = counts.get(getattr(runtime, "NOT_REPRODUCED", "not reproduced"), 0)
    message = str(getattr(outcome, "message", "") or getattr(outcome, "status", ""))
    summary_text = (f"debug run of {os.path.basename(path)}: {message}; {confirmed} confirmed, "
                    f"{not_confirmed} not reproduced, {len(runtime_only)} runtime-only")
    progress.end(summary_text)
    return {
        "uri": uri,
        "status": getattr(outcome, "status", None),
        "message": message,
        "summary": summary_text,
        "confirmed": confirmed,
        "notConfirmed": not_confirmed,
        "runtimeOnly": len(runtime_only),
        "findings": len(findings),
        "error": getattr(outcome, "error", None),
        "logPath": getattr(outcome, "log_path", None) or kwargs["log_path"],
    }


__all__ = ["run_workspace_check", "run_debug", "runtime_diagnostics", "display_name", "remove_debug_logs"]
