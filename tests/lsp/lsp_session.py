"""A test client session: documents as an editor keeps them, and helpers that behave like one
(incremental didChange, applying workspace edits and sending the changes back, waiting for the
diagnostics of a given version, pull or push as the server and client agreed)."""
from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from lsp_checks import (
    check_diagnostic,
    check_workspace_edit,
    lsp_lines,
    register_with_pytest_lsp,
    units,
)

register_with_pytest_lsp()

# Not a speed limit: only how long a wait may last before the test is declared hung. Tests wait
# for events (a version's diagnostics, a status, a message), never assert durations; speed
# targets live in benchmarks/bench_lsp.py.
HANG_GUARD = 240.0
DIAG_TIMEOUT = HANG_GUARD


async def eventually(predicate: Callable[[], bool], what: str = "condition", guard: float = HANG_GUARD) -> None:
    """Wait until ``predicate()`` holds (checked every 50 ms; ``guard`` only stops a hung test)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + guard
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"{what}: never happened (hang guard {guard:.0f}s)")
        await asyncio.sleep(0.05)


def common_prefix(a: str, b: str) -> int:
    """Length of the common prefix (binary search on slices: fast on megabytes)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def to_units_col(line: str, col: int, encoding: str) -> int:
    return units(line[:col], encoding)


def from_units_col(line: str, n: int, encoding: str) -> int:
    count = 0
    for i, ch in enumerate(line):
        if count >= n:
            return i
        count += units(ch, encoding)
    return len(line)


@dataclass
class Doc:
    uri: str
    text: str
    version: int = 1
    language_id: str = "python"
    history: Dict[int, str] = field(default_factory=dict)
    notebook: Optional[str] = None  # the notebook URI of a cell

    def lines(self) -> List[str]:
        return lsp_lines(self.text)


def apply_text_edits(text: str, edits: Sequence[lsp.TextEdit], encoding: str) -> str:
    """Apply LSP edits (all against ``text``) the way an editor does."""
    lines = lsp_lines(text)
    starts = [0]
    i = 0
    while i < len(text):
        if text[i] == "\r" and i + 1 < len(text) and text[i + 1] == "\n":
            i += 1
        if text[i] in "\r\n":
            starts.append(i + 1)
        i += 1

    def offset(p: lsp.Position) -> int:
        if p.line >= len(lines):
            return len(text)
        col = from_units_col(lines[p.line], p.character, encoding)
        return starts[p.line] + col if p.line < len(starts) else len(text)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits),
                   key=lambda s: (s[0], s[1]), reverse=True)
    for a, b, new in spans:
        text = text[:a] + new + text[b:]
    return text


class Session:
    def __init__(self, client: LanguageClient, name: str, caps: lsp.ClientCapabilities, root: Path) -> None:
        self.client = client
        self.name = name
        self.caps = caps
        self.root = root
        self.docs: Dict[str, Doc] = {}
        self.publishes: List[lsp.PublishDiagnosticsParams] = []
        self.publish_event = asyncio.Event()
        self.violations: List[str] = []
        self.registrations: List[lsp.Registration] = []
        self.refreshes = 0
        self.lens_refreshes = 0
        self.applied: List[lsp.WorkspaceEdit] = []
        self.init_result: Optional[lsp.InitializeResult] = None
        self.auto_apply = True
        self._counter = 0
        self._log_index = 0
        self.notebooks: Dict[str, Dict[str, Any]] = {}

    # ------------------------------------------------------------------ negotiated
    @property
    def encoding(self) -> str:
        enc = self.init_result.capabilities.position_encoding if self.init_result else None
        return str(getattr(enc, "value", enc) or "utf-16")

    @property
    def pull(self) -> bool:
        return bool(self.init_result and self.init_result.capabilities.diagnostic_provider is not None)

    @property
    def related_support(self) -> bool:
        bases = ["text_document.publish_diagnostics"] + (["text_document.diagnostic"] if self.pull else [])
        return any(get_capability(self.caps, f"{b}.related_information", False) for b in bases)

    @property
    def markdown(self) -> bool:
        return lsp.MarkupKind.Markdown in (get_capability(self.caps, "text_document.hover.content_format", []) or [])

    def check_server_capabilities(self) -> None:
        caps = self.init_result.capabilities
        offered = get_capability(self.caps, "general.position_encodings", None) or ["utf-16"]
        if self.encoding not in [str(getattr(e, "value", e)) for e in offered] and self.encoding != "utf-16":
            self.violations.append(f"position encoding {self.encoding} not offered by the client ({offered})")
        if caps.diagnostic_provider is not None and get_capability(self.caps, "text_document.diagnostic") is None:
            self.violations.append("diagnosticProvider advertised to a client without pull diagnostics")
        if caps.notebook_document_sync is not None and get_capability(self.caps, "notebook_document") is None:
            self.violations.append("notebookDocumentSync advertised to a client without notebook support")

    # ------------------------------------------------------------------ per test
    def begin_test(self) -> None:
        self.violations = []
        self._log_index = len(self.client.log_messages)
        self._msg_index = len(self.client.messages)

    def end_test(self, allow_errors: bool = False) -> None:
        problems = list(self.violations)
        if not allow_errors:
            for m in self.client.log_messages[self._log_index:]:
                if m.type == lsp.MessageType.Error:
                    problems.append(f"server logged an error: {m.message}")
            for m in self.client.messages[self._msg_index:]:
                if m.type == lsp.MessageType.Error:
                    problems.append(f"server showed an error: {m.message}")
        assert not problems, "\n".join(problems)

    # ------------------------------------------------------------------ documents
    def path(self, name: str) -> Path:
        return self.root / name

    def unique(self, stem: str, suffix: str = ".py") -> str:
        self._counter += 1
        return f"{stem}_{self.name.replace('.', '_').replace('-', '_')}_{self._counter}{suffix}"

    def open(self, name: str, text: str, *, language_id: str = "python", write: bool = True) -> Doc:
        path = self.path(name)
        if write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        uri = path.as_uri()
        doc = Doc(uri=uri, text=text, language_id=language_id)
        doc.history[1] = text
        self.docs[uri] = doc
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id=language_id, version=1, text=text)))
        return doc

    def position(self, doc: Doc, line: int, col: int) -> lsp.Position:
        """``col`` in characters (code points) -> the negotiated encoding."""
        lines = doc.lines()
        return lsp.Position(line=line, character=to_units_col(lines[line] if line < len(lines) else "", col,
                                                                  self.encoding))

    def range(self, doc: Doc, line: int, col: int, end_line: int, end_col: int) -> lsp.Range:
        return lsp.Range(start=self.position(doc, line, col), end=self.position(doc, end_line, end_col))

    def change(self, doc: Doc, new_text: str, *, full: bool = False) -> None:
        """Send the change from doc.text to new_text as one incremental edit (or a full one)."""
        if full:
            event: Any = lsp.TextDocumentContentChangeWholeDocument(text=new_text)
        else:
            old = doc.text
            a = common_prefix(old, new_text)
            b = common_prefix(old[a:][::-1], new_text[a:][::-1])
            b_old, b_new = len(old) - b, len(new_text) - b
            event = lsp.TextDocumentContentChangePartial(
                range=lsp.Range(start=self._pos_of_offset(old, a), end=self._pos_of_offset(old, b_old)),
                text=new_text[a:b_new])
        self._send_change(doc, [event], new_text)

    def _pos_of_offset(self, text: str, offset: int) -> lsp.Position:
        before = text[:offset]
        line = len(lsp_lines(before)) - 1
        start = max(before.rfind("\n"), before.rfind("\r")) + 1
        return lsp.Position(line=line, character=units(before[start:], self.encoding))

    def _send_change(self, doc: Doc, events: List[Any], new_text: str) -> None:
        doc.version += 1
        doc.text = new_text
        doc.history[doc.version] = new_text
        if doc.notebook is not None:
            self._notebook_cell_change(doc, events)
            return
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
            content_changes=events))

    def save(self, doc: Doc) -> None:
        Path(doc.uri[len("file://"):]).write_text(doc.text, encoding="utf-8", errors="surrogatepass")
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri)))

    def close(self, doc: Doc) -> None:
        self.docs.pop(doc.uri, None)
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri)))

    async def close_all(self) -> None:
        for doc in list(self.docs.values()):
            if doc.notebook is None:
                self.close(doc)
        for nb in list(self.notebooks):
            self.close_notebook(nb)

    # ------------------------------------------------------------------ notebooks
    def open_notebook(self, name: str, cells: Sequence[Tuple[str, str]]) -> Tuple[str, List[Doc]]:
        """``cells``: (kind "code"|"markdown", text). Returns the notebook URI and the cell docs."""
        nb_uri = self.path(name).as_uri()
        docs: List[Doc] = []
        nb_cells = []
        items = []
        for i, (kind, text) in enumerate(cells):
            cell_uri = f"vscode-notebook-cell:{self.path(name)}#C{i}"
            lang = "python" if kind == "code" else "markdown"
            doc = Doc(uri=cell_uri, text=text, language_id=lang, notebook=nb_uri)
            doc.history[1] = text
            docs.append(doc)
            self.docs[cell_uri] = doc
            nb_cells.append(lsp.NotebookCell(kind=lsp.NotebookCellKind.Code if kind == "code" else lsp.NotebookCellKind.Markup,
                                             document=cell_uri))
            items.append(lsp.TextDocumentItem(uri=cell_uri, language_id=lang, version=1, text=text))
        self.notebooks[nb_uri] = {"version": 1, "cells": list(docs)}
        self.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(uri=nb_uri, notebook_type="jupyter-notebook", version=1, cells=nb_cells),
            cell_text_documents=items))
        return nb_uri, docs

    def _notebook_cell_change(self, doc: Doc, events: List[Any]) -> None:
        nb = self.notebooks[doc.notebook]
        nb["version"] += 1
        self.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=doc.notebook, version=nb["version"]),
            change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(text_content=[
                lsp.NotebookDocumentCellContentChanges(
                    document=lsp.VersionedTextDocumentIdentifier(uri=doc.uri, version=doc.version),
                    changes=events)]))))

    def insert_cell(self, nb_uri: str, index: int, kind: str, text: str) -> Doc:
        nb = self.notebooks[nb_uri]
        n = len(nb["cells"]) + len([1 for _ in range(0)])
        cell_uri = f"{nb_uri.replace('file://', 'vscode-notebook-cell:')}#N{n}_{self._counter}"
        self._counter += 1
        lang = "python" if kind == "code" else "markdown"
        doc = Doc(uri=cell_uri, text=text, language_id=lang, notebook=nb_uri)
        doc.history[1] = text
        nb["cells"].insert(index, doc)
        self.docs[cell_uri] = doc
        nb["version"] += 1
        cell = lsp.NotebookCell(kind=lsp.NotebookCellKind.Code if kind == "code" else lsp.NotebookCellKind.Markup,
                                document=cell_uri)
        self.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=nb["version"]),
            change=lsp.NotebookDocumentChangeEvent(cells=lsp.NotebookDocumentCellChanges(
                structure=lsp.NotebookDocumentCellChangeStructure(
                    array=lsp.NotebookCellArrayChange(start=index, delete_count=0, cells=[cell]),
                    did_open=[lsp.TextDocumentItem(uri=cell_uri, language_id=lang, version=1, text=text)])))))
        return doc

    def close_notebook(self, nb_uri: str) -> None:
        nb = self.notebooks.pop(nb_uri, None)
        if nb is None:
            return
        for d in nb["cells"]:
            self.docs.pop(d.uri, None)
        self.client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[lsp.TextDocumentIdentifier(uri=d.uri) for d in nb["cells"]]))

    # ------------------------------------------------------------------ diagnostics
    def on_publish(self, params: lsp.PublishDiagnosticsParams) -> None:
        self.publishes.append(params)
        doc = self.docs.get(params.uri)
        text = None
        if doc is not None and params.version is not None:
            text = doc.history.get(params.version)
            if text is None:
                self.violations.append(f"diagnostics published for {params.uri} version {params.version}, "
                                       "which the client never had")
        for d in params.diagnostics:
            self.violations += check_diagnostic(d, self.caps, text, self.encoding, pull=False)
        self.publish_event.set()

    def latest_publish(self, uri: str) -> Optional[lsp.PublishDiagnosticsParams]:
        for p in reversed(self.publishes):
            if p.uri == uri:
                return p
        return None

    async def diagnostics(self, doc: Doc, where: Optional[Callable[[List[lsp.Diagnostic]], bool]] = None,
                          timeout: float = DIAG_TIMEOUT) -> List[lsp.Diagnostic]:
        """The diagnostics of ``doc``'s current version (that satisfy ``where``, if given)."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while True:
            if self.pull:
                report = await asyncio.wait_for(self.client.text_document_diagnostic_async(lsp.DocumentDiagnosticParams(
                    text_document=lsp.TextDocumentIdentifier(uri=doc.uri))), max(0.1, deadline - time.monotonic()))
                items = list(getattr(report, "items", None) or [])
                for d in items:
                    self.violations += check_diagnostic(d, self.caps, doc.text, self.encoding, pull=True)
                last = items
                if where is None or where(items):
                    return items
            else:
                p = self.latest_publish(doc.uri)
                if p is not None and (p.version is None or p.version == doc.version):
                    items = list(p.diagnostics)
                    last = items
                    if where is None or where(items):
                        return items
            if time.monotonic() > deadline:
                raise AssertionError(f"[{self.name}] no matching diagnostics for {doc.uri} v{doc.version} within "
                                     f"{timeout}s; last: {[(d.code, d.range.start.line) for d in (last or [])]}")
            if self.pull:
                await asyncio.sleep(0.05)
            else:
                self.publish_event.clear()
                try:
                    await asyncio.wait_for(self.publish_event.wait(), max(0.05, min(0.5, deadline - time.monotonic())))
                except asyncio.TimeoutError:
                    pass

    # ------------------------------------------------------------------ requests
    async def hover(self, doc: Doc, line: int, col: int) -> Optional[lsp.Hover]:
        return await self.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri), position=self.position(doc, line, col)))

    async def hover_ready(self, doc: Doc, unit_uri: Optional[str] = None) -> None:
        """Hover answers at once from what the server holds; the first hover on a state asks it
        to prepare the unit's timelines in the background. Ask once, then wait until they are
        prepared for the unit's current state (``unit_uri``: the notebook of a cell)."""
        from gradwarden.lsp.documents import uri_key

        await self.hover(doc, 0, 0)
        key = uri_key(unit_uri or doc.uri)
        await self.until_status(lambda st: key in st["hover_tables"]
                                and st["hover_tables"][key] == st["generations"].get(key),
                                f"hover table of {key}")

    async def fixes_ready(self, doc: Doc, unit_uri: Optional[str] = None) -> None:
        """Code actions answer at once; fixes whose edits are not prepared yet are offered
        lazily and prepared in the background. Ask once, then wait until the edits of the
        unit's current state are prepared (what an editor sees after a pause)."""
        from gradwarden.lsp.documents import uri_key

        await self.code_actions(doc)
        key = uri_key(unit_uri or doc.uri)
        await self.until_status(lambda st: st["fixes_prepared"].get(key) == st["generations"].get(key),
                                f"fix edits of {key}")

    async def code_actions(self, doc: Doc, rng: Optional[lsp.Range] = None, *, only: Optional[List[str]] = None,
                           diagnostics: Optional[List[lsp.Diagnostic]] = None) -> List[Any]:
        if rng is None:
            lines = doc.lines()
            rng = self.range(doc, 0, 0, len(lines) - 1, len(lines[-1]))
        result = await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=doc.uri), range=rng,
            context=lsp.CodeActionContext(diagnostics=diagnostics or [], only=only)))
        return list(result or [])

    async def resolve(self, action: lsp.CodeAction) -> lsp.CodeAction:
        if action.edit is not None:
            return action
        props = get_capability(self.caps, "text_document.code_action.resolve_support.properties", []) or []
        assert "edit" in props, f"[{self.name}] action {action.title!r} has no edit and the client cannot resolve"
        return await self.client.code_action_resolve_async(action)

    async def apply_action(self, action: Any) -> None:
        """What an editor does when the user picks the action."""
        if isinstance(action, lsp.Command):
            await self.command(action.command, *(action.arguments or []))
            return
        props = get_capability(self.caps, "text_document.code_action.resolve_support.properties", []) or []
        if action.edit is None and action.command is not None and "edit" not in props:
            # a fix computed when picked: the command makes the server send workspace/applyEdit
            result = await self.command(action.command.command, *(action.command.arguments or []))
            assert result and result.get("applied"), f"[{self.name}] {action.title!r}: {result}"
            return
        action = await self.resolve(action)
        assert action.edit is not None, f"[{self.name}] {action.title!r} resolved to no edit"
        self.apply_edit(action.edit)
        if action.command is not None:
            await self.command(action.command.command, *(action.command.arguments or []))

    def apply_edit(self, edit: lsp.WorkspaceEdit) -> None:
        versions = {u: d.version for u, d in self.docs.items()}
        texts = {u: d.text for u, d in self.docs.items()}
        self.violations += check_workspace_edit(edit, self.caps, versions, texts, self.encoding)
        per_uri: Dict[str, List[lsp.TextEdit]] = {}
        for change in edit.document_changes or []:
            per_uri.setdefault(change.text_document.uri, []).extend(change.edits)
        for uri, edits in (edit.changes or {}).items():
            per_uri.setdefault(uri, []).extend(edits)
        for uri, edits in per_uri.items():
            doc = self.docs[uri]
            new_text = apply_text_edits(doc.text, edits, self.encoding)
            # Editors send the edits themselves (reverse order keeps earlier positions valid).
            events = [lsp.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
                      for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)]
            self._send_change(doc, events, new_text)
        self.applied.append(edit)

    async def command(self, name: str, *args: Any) -> Any:
        return await self.client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=name, arguments=list(args)))

    async def status(self) -> Dict[str, Any]:
        return await self.command("gradwarden.serverStatus")

    async def until_status(self, predicate: Callable[[Dict[str, Any]], bool], what: str = "server status",
                           guard: float = HANG_GUARD) -> Dict[str, Any]:
        """The server status, once ``predicate`` holds for it (asked every 50 ms)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + guard
        while True:
            status = await self.status()
            if predicate(status):
                return status
            if loop.time() > deadline:
                raise AssertionError(f"{what}: never happened (hang guard {guard:.0f}s); last: {status}")
            await asyncio.sleep(0.05)

    def log_text(self) -> str:
        return "\n".join(m.message for m in self.client.log_messages[self._log_index:])


# ---------------------------------------------------------------------- the client
async def end_started_session(lsp_client: LanguageClient) -> None:
    """Teardown of a fixture whose test calls ``start_session`` itself: end that session (if
    the test got as far as starting one) and shut the server down."""
    session = getattr(lsp_client, "session", None)
    if session is not None:
        session.end_test()
        await session.close_all()
        await lsp_client.shutdown_session()


def _converter():
    """lsprotocol's converter reads any code-action item with a ``command`` key as a Command,
    but a CodeAction may carry a command object (a fix computed when picked). Real clients
    tell them apart by the type of ``command`` (VS Code's ``Command.is``, eglot's strict
    dcase, Neovim's ``type(action.command) == "table"``); so does this client."""
    converter = default_converter()

    def command_or_action(obj: Any, _: type) -> Any:
        if isinstance(obj.get("command"), str):
            return converter.structure(obj, lsp.Command)
        return converter.structure(obj, lsp.CodeAction)

    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], command_or_action)
    return converter


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=_converter)
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        session = getattr(client, "session", None)
        if session is not None:
            session.on_publish(params)

    def apply_edit(client: LanguageClient, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        session = getattr(client, "session", None)
        if session is None or not session.auto_apply:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason="not applying")
        if not get_capability(session.caps, "workspace.apply_edit", False):
            session.violations.append("workspace/applyEdit sent to a client without applyEdit")
        session.apply_edit(params.edit)
        return lsp.ApplyWorkspaceEditResult(applied=True)

    def register(client: LanguageClient, params: lsp.RegistrationParams) -> None:
        session = getattr(client, "session", None)
        if session is not None:
            session.registrations.extend(params.registrations)

    def unregister(client: LanguageClient, params: lsp.UnregistrationParams) -> None:
        return None

    def refresh(client: LanguageClient, params: Any) -> None:
        session = getattr(client, "session", None)
        if session is not None:
            session.refreshes += 1
            if not get_capability(session.caps, "workspace.diagnostics.refresh_support", False):
                session.violations.append("workspace/diagnostic/refresh sent to a client without refreshSupport")

    def lens_refresh(client: LanguageClient, params: Any) -> None:
        session = getattr(client, "session", None)
        if session is not None:
            session.lens_refreshes += 1
            if not get_capability(session.caps, "workspace.code_lens.refresh_support", False):
                session.violations.append("workspace/codeLens/refresh sent to a client without refreshSupport")

    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[lsp.WORKSPACE_CODE_LENS_REFRESH] = lens_refresh
    features[lsp.WORKSPACE_APPLY_EDIT] = apply_edit
    features[lsp.CLIENT_REGISTER_CAPABILITY] = register
    features[lsp.CLIENT_UNREGISTER_CAPABILITY] = unregister
    features[lsp.WORKSPACE_DIAGNOSTIC_REFRESH] = refresh
    register_lsp_features(client, features)
    return client


def codes(diags: Sequence[lsp.Diagnostic]) -> List[Tuple[str, int]]:
    return [(str(d.code), d.range.start.line + 1) for d in diags]


def dump(obj: Any) -> str:
    from lsprotocol.converters import get_converter

    return json.dumps(get_converter().unstructure(obj), indent=1)[:4000]


def cases_dir():
    import os

    return Path(os.environ.get("GRADWARDEN_CASES") or (Path(__file__).resolve().parents[3] / "shared" / "cases"))


def seed_cases() -> List[Path]:
    """The seed cases (``../shared/cases/seeds``); a missing directory fails the test that asks."""
    folder = cases_dir() / "seeds"
    found = sorted(folder.glob("*.py"))
    assert found, f"no seed cases under {folder} (set GRADWARDEN_CASES)"
    return found
