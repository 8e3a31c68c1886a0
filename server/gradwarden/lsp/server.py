"""The pygls server: each LSP message mapped to the helper that answers it (the wiring only; the
helpers never import this module: they see the server through ``context.ServerContext``).

- diagnostics: ``analysis`` (scheduling), ``pull`` (pull answers and refresh), ``convert``;
- hover: ``hover_answer`` (pure: text, latest result, prepared table), ``hover_table``;
- code actions: ``actions`` (building them), ``fix_edits`` (the fixer's edits and their cache),
  ``prefetch`` / ``prepared`` (what is prepared in the background for both);
- commands: ``commands``.

Threads and processes: the event loop only moves messages, converts and renders; the engine
runs in worker processes (``worker.WorkerPool``), so a large file never blocks hover or code
actions on another document, and a pathological one costs a worker, never the server.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import logging
import os
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from gradwarden import __version__
from gradwarden.config import CONFIG_FILENAMES
from gradwarden.lsp import actions, commands, hover_answer, prefetch, pull
from gradwarden.lsp.analysis import AnalysisService, Result
from gradwarden.lsp.convert import FIX_ALL_KIND, ClientFeatures, to_lsp_diagnostic
from gradwarden.lsp.documents import (
    Located,
    Program,
    Snapshot,
    build_notebook_program,
    display_name,
    locate,
    uri_key,
    uri_to_path,
)
from gradwarden.lsp.jobs import ROOTS_ENV, forbid_torch
from gradwarden.lsp.logsetup import configure_logging  # noqa: F401 - its old home
from gradwarden.lsp.options import ServerOptions, SettingsResolver, parse_options, unwrap
from gradwarden.lsp.positions import LineIndex, index_for, normalize_encoding
from gradwarden.lsp.prepared import Prepared
from gradwarden.lsp.textdoc import upgrade_workspace
from gradwarden.lsp.worker import WorkerPool, foreground_first_from_env

log = logging.getLogger("gradwarden.lsp")

SERVER_NAME = "gradwarden"
CONFIG_SECTION = "gradwarden"
PYTHON_LANGUAGES = ("python", "py", "python3", "")
RESULT_WAIT = 30.0  # seconds a request waits for an analysis before answering with what there is


class _Rejected:
    """A message that could not be read (handle_message ignores it: wrong ``jsonrpc``)."""

    jsonrpc = "rejected"


class GradwardenProtocol(LanguageServerProtocol):
    """pygls' protocol, plus: a request whose params do not deserialize gets an InvalidParams
    error (pygls would leave the client waiting), and the advertised capabilities follow the
    client (pull diagnostics only for clients that pull)."""

    def structure_message(self, data: Dict[str, Any]):  # type: ignore[override]
        try:
            return super().structure_message(data)
        except JsonRpcException:
            if isinstance(data, dict) and "id" in data and "method" in data:
                log.warning("invalid params for %s (id %s): answered with an error", data.get("method"), data.get("id"))
                try:
                    self._send_response(data["id"], error=JsonRpcInvalidParams(
                        f"invalid params for {data.get('method')}").to_response_error())
                except Exception:  # noqa: BLE001
                    log.exception("could not answer an invalid request")
            else:
                log.warning("ignored an unreadable notification %r", data.get("method") if isinstance(data, dict) else data)
            return _Rejected()

    # (id, result) of the initialize answered by the start-up front (front.py): pygls still
    # handles that request (client capabilities, the initialize handler), but its own answer
    # is not sent twice; it is compared with the front's instead.
    preanswered: Optional[Tuple[Any, Dict[str, Any]]] = None

    def _send_response(self, msg_id, result=None, error=None):  # type: ignore[override]
        pre = self.preanswered
        if pre is not None and msg_id == pre[0]:
            self.preanswered = None
            self._check_preanswered(pre[1], result, error)
            return
        super()._send_response(msg_id, result, error)

    def _check_preanswered(self, sent: Dict[str, Any], result: Any, error: Any) -> None:
        if error is not None:
            reason = getattr(error, "message", error)
            log.error("initialize could not be handled after it was answered: %s", reason)
            self._server.show(f"gradwarden: the initialize request could not be read: {reason}", lsp.MessageType.Error)
            return
        ours = json.loads(json.dumps(result, default=self._serialize_message))
        if ours != sent:
            log.error("the initialize answer sent at start-up differs from pygls' (initialize_answer.py is "
                      "out of date): sent %s, pygls %s", json.dumps(sent), json.dumps(ours))

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams):  # type: ignore[override]
        result = yield from super().lsp_initialize(params)
        server: GradwardenServer = self._server  # type: ignore[assignment]
        caps = result.capabilities
        if not server.pull:
            caps.diagnostic_provider = None
        return result


class GradwardenServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            protocol_cls=GradwardenProtocol,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[lsp.NotebookDocumentFilterWithCells(
                    notebook="*", cells=[lsp.NotebookCellLanguage(language="python")])],
                save=True,
            ),
        )
        self.options = ServerOptions()
        self.features = ClientFeatures()
        self.resolver = SettingsResolver(self.options)
        self.pool: Optional[WorkerPool] = None
        self.analysis: Optional[AnalysisService] = None
        self.pull = False
        self.workers_override: Optional[int] = None
        self.init_options_given = False
        self.published: Dict[str, Set[str]] = {}  # unit key -> URIs it last published to
        self.languages: Dict[str, str] = {}  # text document key -> languageId
        self.progress_cancelled: Set[str] = set()
        self.workspace_published: Set[str] = set()
        self.runtime_findings: Dict[str, Tuple[Result, list]] = {}  # unit -> (its result then, verdicts)
        self.runtime_generation = 0
        self.debug_summaries: Dict[str, Dict[str, int]] = {}  # unit -> the last run's counts (the lens says them)
        self.debug_running: Set[str] = set()  # units with a debug run in progress
        self.lens_answered: Dict[str, Any] = {}  # unit -> what its last code lens answer counted
        self.errors_reported: Set[str] = set()
        self.fix_cache: Dict[str, Tuple[Tuple[int, int], Dict[Tuple[int, int], Any]]] = {}
        self.pull_refresh_owed: Set[str] = set()  # units answered with an older result (pull.py)
        self.pull_refreshes = 0
        self.prepared = Prepared()  # hover tables and the tasks preparing them
        self.hovers_answered = 0

    # ------------------------------------------------------------------ plumbing
    def report_server_error(self, error: Exception, source) -> None:  # type: ignore[override]
        # pygls would pop up "Error in server" for every out-of-band error; log instead.
        log.error("%s: %s", getattr(source, "__name__", source), error)

    def log_to_client(self, message: str, level: lsp.MessageType = lsp.MessageType.Info) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=level, message=message))
        except Exception:  # noqa: BLE001
            log.debug("could not send a log message", exc_info=True)

    def show(self, message: str, level: lsp.MessageType = lsp.MessageType.Warning) -> None:
        try:
            self.window_show_message(lsp.ShowMessageParams(type=level, message=message))
        except Exception:  # noqa: BLE001
            log.debug("could not show a message", exc_info=True)

    def unit_of(self, uri: str) -> Optional[str]:
        """The unit (file or notebook) a document belongs to; None when it is not open."""
        key = uri_key(uri)
        ws = self.workspace
        nb = ws._cell_in_notebook.get(key)
        if nb is not None:
            return nb
        if key in ws._notebook_documents:
            return key
        if key in self.languages:
            return key
        return None

    def is_notebook(self, key: str) -> bool:
        return key in self.workspace._notebook_documents

    def snapshot_of(self, key: str, generation: int) -> Optional[Snapshot]:
        ws = self.workspace
        notebook = ws._notebook_documents.get(key)
        if notebook is not None:
            cells = []
            texts: Dict[str, str] = {}
            versions: Dict[str, Optional[int]] = {}
            for cell in notebook.cells:
                doc = ws._text_documents.get(uri_key(cell.document))
                if doc is None:
                    continue
                text = doc.source
                is_code = cell.kind == lsp.NotebookCellKind.Code and (doc.language_id or "python").lower() in PYTHON_LANGUAGES
                cells.append((cell.document, text, is_code))
                if is_code:
                    texts[cell.document] = text
                    versions[cell.document] = doc.version
            program = build_notebook_program(cells)
            return Snapshot(key=key, uri=notebook.uri, generation=generation, program=program,
                            filename=display_name(notebook.uri), versions=versions,
                            documents=tuple(c.uri for c in program.cells), texts=texts)
        doc = ws._text_documents.get(key)
        if doc is None:
            return None
        text = doc.source
        return Snapshot(key=key, uri=doc.uri, generation=generation, program=Program(text),
                        filename=display_name(doc.uri), versions={doc.uri: doc.version},
                        documents=(doc.uri,), texts={doc.uri: text})

    def located(self, result: Result) -> List[Located]:
        snap = result.snapshot
        settings = self.resolver.for_file(snap.filename)
        if self.resolver.problems:
            self._report_config_problems()
        items = locate(snap.program, snap.uri, settings.apply(result.diagnostics))
        if result.carried:
            items += locate(snap.program, snap.uri, settings.apply(result.carried), carried=True)
        return items

    def label_for(self, program: Program, uri: str):
        """Row labels for messages and hovers: "line 7", or "cell 2, line 3" in a notebook."""
        if not program.is_notebook:
            # a related place in another file of the project is named by that file
            return lambda u, row: f"line {row}" if uri_key(u) == uri_key(uri) else \
                f"{os.path.basename(display_name(u))} line {row}"

        def label(u: str, row: int) -> str:
            cell = program.cell(u)
            if cell is None:
                return f"line {row}"
            if uri_key(u) == uri_key(uri):
                return f"line {row}"
            return f"cell {program.cell_number(cell)}, line {row}"

        return label

    def lsp_items(self, result: Result, uri: Optional[str] = None) -> Iterator[Tuple[int, Located, lsp.Diagnostic]]:
        """(index, located diagnostic, LSP diagnostic) for ``uri`` (every document with None)."""
        snap = result.snapshot
        indexes = {u: index_for(t, self.features.encoding) for u, t in snap.texts.items()}
        for n, item in enumerate(self.located(result)):
            if uri is not None and uri_key(item.uri) != uri_key(uri):
                continue
            index = indexes.get(item.uri) or LineIndex("", self.features.encoding)
            label = self.label_for(snap.program, item.uri)
            data = {"unit": snap.key, "generation": snap.generation, "index": n}
            yield n, item, to_lsp_diagnostic(item, index, self.features, indexes=indexes, label=label, data=data)

    def latest_for_request(self, key: str) -> Optional[Result]:
        """What hover and code actions answer from, at once: the result of the unit's current
        state, else the last one carried to the current text (provisional); None before the
        first analysis of the unit ends."""
        if self.analysis is None:
            return None
        return self.analysis.current(key) or self.analysis.provisional(key)

    async def wait_result(self, key: str, urgent: bool = False) -> Optional[Result]:
        if self.analysis is None:
            return None
        try:
            return await asyncio.wait_for(self.analysis.wait(key, urgent=urgent), RESULT_WAIT)
        except asyncio.TimeoutError:
            log.warning("no analysis result for %s within %.0fs; using the latest", key, RESULT_WAIT)
            return self.analysis.latest(key)

    # ------------------------------------------------------------------ results
    def on_result(self, key: str, result: Result) -> None:
        if result.error and key not in self.errors_reported:
            self.errors_reported.add(key)
            self.log_to_client(f"gradwarden: analysis of {result.snapshot.filename} failed ({result.error}); "
                               "showing the last diagnostics", lsp.MessageType.Warning)
        elif not result.error:
            self.errors_reported.discard(key)
        self._report_config_problems()
        commands.lenses_after_result(self, key, result)
        if self.pull:
            pull.after_result(self, key)
            return
        self.publish(key, result)
        if self.analysis is not None:
            prefetch.schedule(self, key, result)

    def publish(self, key: str, result: Result) -> None:
        by_uri: Dict[str, List[lsp.Diagnostic]] = {u: [] for u in result.snapshot.documents}
        for _, item, diag in self.lsp_items(result):
            by_uri.setdefault(item.uri, []).append(diag)
        for uri, extra in commands.runtime_diagnostics(self, key, result).items():
            by_uri[uri] = commands.merge_runtime(by_uri.get(uri, []), extra)
        previous = self.published.get(key, set())
        for uri in previous - set(by_uri):
            self._publish(uri, [], None)
        for uri, diags in by_uri.items():
            self._publish(uri, diags, result.snapshot.versions.get(uri))
        self.published[key] = set(by_uri)

    def _publish(self, uri: str, diags: List[lsp.Diagnostic], version: Optional[int]) -> None:
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    def republish_all(self) -> None:
        """Settings changed: the diagnostics are re-filtered (no re-analysis needed)."""
        if self.analysis is None:
            return
        if self.pull:
            if self.features.diagnostic_refresh and any(st.result is not None for st in self.analysis.units.values()):
                try:
                    self.workspace_diagnostic_refresh(None)
                except Exception:  # noqa: BLE001
                    log.debug("diagnostic refresh failed", exc_info=True)
            return
        for key, st in list(self.analysis.units.items()):
            # Settings are applied when diagnostics are converted: no re-analysis needed; a unit
            # whose analysis is still running publishes with the new settings when it is done.
            if st.result is not None and st.result.generation == st.generation:
                self.publish(key, st.result)

    def _report_config_problems(self) -> None:
        for problem in self.resolver.take_problems():
            self.show(problem, lsp.MessageType.Warning)

    # ------------------------------------------------------------------ settings
    def apply_options(self, raw: Any, *, startup: bool = False) -> None:
        options, problems = parse_options(raw)
        if self.workers_override is not None:
            from dataclasses import replace

            options = replace(options, workers=self.workers_override)
        for p in problems:
            self.show(f"gradwarden: {p}", lsp.MessageType.Warning)
        self.options = options
        self.resolver.update(options)
        if self.analysis is not None:
            self.analysis.configure(debounce=options.debounce_ms / 1000.0, lint_on=options.lint_on,
                                    timeout=options.analysis_timeout)
        if not startup:
            self.republish_all()

    def start_workers(self) -> None:
        n = self.options.workers
        self.pool = WorkerPool(max(n, 1), mode="process" if n > 0 else "thread", timeout=self.options.analysis_timeout,
                               foreground_first=foreground_first_from_env())
        self.pool.start()
        atexit.register(self.pool.close_now)
        self.analysis = AnalysisService(
            self.pool, self.snapshot_of, self.on_result,
            debounce=self.options.debounce_ms / 1000.0, lint_on=self.options.lint_on,
            timeout=self.options.analysis_timeout,
        )


server = None  # the running instance (see create_server)


def create_server() -> GradwardenServer:
    forbid_torch()
    ls = GradwardenServer()
    _register(ls)
    return ls


MAX_DEPENDENT_REFRESH = 20  # open documents analysed again when a module of the project is saved


def _register(ls: GradwardenServer) -> None:  # noqa: C901 - one place that lists every handler
    # ------------------------------------------------------------------ lifecycle
    @ls.feature(lsp.INITIALIZE)
    def initialize(ls: GradwardenServer, params: lsp.InitializeParams) -> None:
        upgrade_workspace(ls.workspace)
        encoding = normalize_encoding(str(getattr(ls.workspace.position_encoding, "value",
                                                  ls.workspace.position_encoding)))
        ls.features = ClientFeatures.from_capabilities(params.capabilities, encoding)
        root = ls.workspace.root_path or (uri_to_path(params.workspace_folders[0].uri)
                                          if params.workspace_folders else None) or os.getcwd()
        ls.resolver.root = Path(root)
        # the workspace folders are the project's roots (a script in tools/ without a marker
        # still imports the packages beside it), here and in the workers started below
        folders = [uri_to_path(f.uri) for f in params.workspace_folders or ()] or [str(root)]
        os.environ[ROOTS_ENV] = os.pathsep.join(f for f in folders if f)
        ls.init_options_given = bool(unwrap(params.initialization_options))
        ls.apply_options(params.initialization_options, startup=True)
        mode = ls.options.diagnostic_mode
        ls.pull = ls.features.pull_diagnostics if mode == "auto" else (mode == "pull" and ls.features.pull_diagnostics)
        ls.start_workers()
        name = params.client_info.name if params.client_info else "unknown client"
        log.info("initialized for %s: encoding %s, %s diagnostics", name, encoding, "pull" if ls.pull else "push")

    @ls.feature(lsp.INITIALIZED)
    async def initialized(ls: GradwardenServer, params: lsp.InitializedParams) -> None:
        registrations = []
        if ls.features.dynamic_configuration:
            registrations.append(lsp.Registration(id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_CONFIGURATION,
                                                  register_options=lsp.DidChangeConfigurationRegistrationOptions(
                                                      section=CONFIG_SECTION)))
        if ls.features.dynamic_watched_files:
            watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_FILENAMES]
            registrations.append(lsp.Registration(id=str(uuid.uuid4()), method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                                  register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
                                                      watchers=watchers)))
        if registrations:
            try:
                await ls.client_register_capability_async(lsp.RegistrationParams(registrations=registrations))
            except Exception as exc:  # noqa: BLE001 - optional
                log.info("dynamic registration refused: %s", exc)
        if ls.features.configuration and not ls.init_options_given:
            await _pull_configuration(ls)
        ls._report_config_problems()

    @ls.feature(lsp.SHUTDOWN)
    async def shutdown(ls: GradwardenServer, params: None) -> None:
        commands.cancel_all(ls)
        commands.remove_debug_logs()
        if ls.pool is not None:
            await ls.pool.close()

    @ls.feature(lsp.EXIT)
    def exit_(ls: GradwardenServer, params: None) -> None:
        # pygls would sys.exit() from the event loop, and the interpreter would then wait for
        # the thread blocked reading stdin (forever when the client keeps the pipe open):
        # clients then kill the server. Stop the workers and leave at once instead.
        if ls.pool is not None:
            ls.pool.close_now()
        commands.remove_debug_logs()  # os._exit below runs no atexit handler
        code = 0 if ls.protocol._shutdown else 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            logging.shutdown()
        finally:
            os._exit(code)

    # ------------------------------------------------------------------ text documents
    @ls.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: GradwardenServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        language = (item.language_id or "").lower()
        if language not in PYTHON_LANGUAGES and not item.uri.endswith((".py", ".pyi")):
            return
        key = uri_key(item.uri)
        ls.languages[key] = language
        ls.workspace_published.discard(item.uri)
        if ls.analysis:
            ls.analysis.opened(key)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: GradwardenServer, params: lsp.DidChangeTextDocumentParams) -> None:
        key = uri_key(params.text_document.uri)
        if key in ls.languages and ls.analysis:
            prefetch.cancel(ls, key)
            ls.analysis.changed(key)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: GradwardenServer, params: lsp.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri.rsplit("/", 1)[-1] in CONFIG_FILENAMES:
            ls.resolver.invalidate()
            ls.republish_all()
            return
        key = uri_key(uri)
        if key in ls.languages and ls.analysis:
            ls.analysis.saved(key)
            # what the other open documents' analyses read of this file (a script following its
            # imports, a helper shown what its importers found in it) is its saved text
            for other in [k for k in ls.analysis.units if k != key and k in ls.languages][:MAX_DEPENDENT_REFRESH]:
                ls.analysis.refresh(other)

    @ls.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: GradwardenServer, params: lsp.DidCloseTextDocumentParams) -> None:
        key = uri_key(params.text_document.uri)
        if ls.languages.pop(key, None) is None:
            return
        _close_unit(ls, key)

    # ------------------------------------------------------------------ notebooks
    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def nb_open(ls: GradwardenServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        if ls.analysis:
            ls.analysis.opened(uri_key(params.notebook_document.uri))

    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def nb_change(ls: GradwardenServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        if ls.analysis:
            prefetch.cancel(ls, uri_key(params.notebook_document.uri))
            ls.analysis.changed(uri_key(params.notebook_document.uri))

    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def nb_save(ls: GradwardenServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        if ls.analysis:
            ls.analysis.saved(uri_key(params.notebook_document.uri))

    @ls.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def nb_close(ls: GradwardenServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        _close_unit(ls, uri_key(params.notebook_document.uri))

    # ------------------------------------------------------------------ diagnostics (pull)
    @ls.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC, lsp.DiagnosticOptions(
        identifier=SERVER_NAME, inter_file_dependencies=False, workspace_diagnostics=False))
    async def document_diagnostic(ls: GradwardenServer, params: lsp.DocumentDiagnosticParams):
        uri = params.text_document.uri
        key = ls.unit_of(uri)
        if key is None or ls.analysis is None:
            return pull.empty_report()  # not a document of ours (or not open)
        result = await pull.result_for_pull(ls.analysis, key, ls.options.pull_wait_ms / 1000.0, ls.pull_refresh_owed,
                                            can_refresh=ls.features.diagnostic_refresh)
        if result is None:
            return pull.empty_report()  # closed meanwhile
        result_id = pull.result_id(ls, result)
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        items = [diag for _, _, diag in ls.lsp_items(result, uri)]
        items = commands.merge_runtime(items, commands.runtime_diagnostics(ls, key, result).get(uri, []))
        if ls.analysis is not None:
            prefetch.schedule(ls, key, result)
        return lsp.RelatedFullDocumentDiagnosticReport(items=items, result_id=result_id)

    # ------------------------------------------------------------------ hover
    @ls.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: GradwardenServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
        # From the latest result and what was prepared for it; never waits for an analysis.
        uri = params.text_document.uri
        key = ls.unit_of(uri)
        doc = ls.workspace._text_documents.get(uri_key(uri))
        if key is None or doc is None:
            return None
        result = ls.latest_for_request(key)
        table = None
        if result is not None:
            table = ls.prepared.hover_table(key, result.generation)
            if table is None:
                prefetch.prepare_on_request(ls, key, result)  # for the next hover; this one answers now
        ls.hovers_answered += 1
        return hover_answer.answer_hover(
            uri=uri, text=doc.source, line=params.position.line, character=params.position.character,
            encoding=ls.features.encoding, markdown=ls.features.hover_markdown,
            program=result.snapshot.program if result is not None else None,
            items=ls.located(result) if result is not None else [], table=table)

    # ------------------------------------------------------------------ code actions
    @ls.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
        resolve_provider=True))
    async def code_action(ls: GradwardenServer, params: lsp.CodeActionParams):
        return await actions.code_actions(ls, params)

    @ls.feature(lsp.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: GradwardenServer, params: lsp.CodeAction) -> lsp.CodeAction:
        return await actions.resolve(ls, params)

    # ------------------------------------------------------------------ code lens
    @ls.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: GradwardenServer, params: lsp.CodeLensParams):
        return await commands.code_lenses(ls, params.text_document.uri)

    # ------------------------------------------------------------------ configuration
    @ls.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: GradwardenServer, params: lsp.DidChangeConfigurationParams) -> None:
        settings = params.settings
        ours = unwrap(settings) if isinstance(settings, dict) else {}
        if isinstance(settings, dict) and CONFIG_SECTION in settings:
            ls.apply_options(settings[CONFIG_SECTION])
        elif ours and not set(ours) <= {"settings"}:
            ls.apply_options(ours)
        elif ls.features.configuration:
            await _pull_configuration(ls, startup=False)
        else:
            ls.apply_options({})

    @ls.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: GradwardenServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.rsplit("/", 1)[-1] in CONFIG_FILENAMES for change in params.changes):
            ls.resolver.invalidate()
            ls.republish_all()
        elif ls.analysis and any(change.uri.endswith(".py") and uri_key(change.uri) not in ls.analysis.units
                                 for change in params.changes):
            # a module of the project changed outside the editor: the open documents whose
            # analyses follow it (or are shown what it found) see it again
            for other in [k for k in ls.analysis.units if k in ls.languages][:MAX_DEPENDENT_REFRESH]:
                ls.analysis.refresh(other)

    @ls.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: GradwardenServer, params: lsp.WorkDoneProgressCancelParams) -> None:
        ls.progress_cancelled.add(str(params.token))
        commands.cancel_token(ls, str(params.token))

    # ------------------------------------------------------------------ commands
    # No annotations on the handlers: pygls resolves them with typing.get_type_hints to
    # structure the arguments, and the arguments are plain JSON here.
    @ls.command(commands.CHECK_WORKSPACE)
    async def check_workspace(ls, *args):  # noqa: ANN001
        return await commands.run_workspace_check(ls, args)

    @ls.command(commands.FIX_ALL)
    async def fix_all(ls, *args):  # noqa: ANN001
        return await commands.run_fix_all(ls, args)

    @ls.command(commands.APPLY_EDIT)
    async def apply_edit(ls, *args):  # noqa: ANN001
        return await commands.apply_workspace_edit(ls, args)

    @ls.command(commands.APPLY_FIX)
    async def apply_fix(ls, *args):  # noqa: ANN001
        return await commands.run_apply_fix(ls, args)

    @ls.command(commands.DEBUG_RUN)
    async def debug_run(ls, *args):  # noqa: ANN001
        return await commands.run_debug(ls, args)

    @ls.command(commands.SHOW_TIMELINE)
    async def show_timeline(ls, *args):  # noqa: ANN001
        return await commands.show_timeline(ls, args)

    @ls.command(commands.STATUS)
    def status(ls, *args):  # noqa: ANN001
        return commands.server_status(ls)


async def _pull_configuration(ls: GradwardenServer, startup: bool = True) -> None:
    try:
        values = await asyncio.wait_for(ls.workspace_configuration_async(lsp.ConfigurationParams(
            items=[lsp.ConfigurationItem(section=CONFIG_SECTION)])), 5.0)
    except Exception as exc:  # noqa: BLE001 - a client that cannot answer keeps the defaults
        log.info("workspace/configuration failed: %s", exc)
        return
    value = values[0] if values else None
    ls.apply_options(value or {}, startup=False)


def _close_unit(ls: GradwardenServer, key: str) -> None:
    if ls.analysis:
        ls.analysis.closed(key)
    commands.forget_unit(ls, key)
    if not ls.pull:
        for uri in ls.published.pop(key, set()):
            ls._publish(uri, [], None)
    else:
        ls.published.pop(key, None)


def serve(*, tcp: Optional[Tuple[str, int]] = None, workers: Optional[int] = None) -> int:
    return run_server(create_server(), tcp=tcp, workers=workers)


def run_server(ls: GradwardenServer, *, tcp: Optional[Tuple[str, int]] = None, workers: Optional[int] = None,
               stdin: Any = None, preanswered: Optional[Tuple[Any, Dict[str, Any]]] = None) -> int:
    """Serve on stdio (``stdin``: what to read instead of sys.stdin, the front's pipe) or TCP;
    ``preanswered``: the initialize the front already answered (front.py)."""
    global server
    server = ls
    if workers is not None:
        ls.workers_override = workers
        from dataclasses import replace

        ls.options = replace(ls.options, workers=workers)
    ls.protocol.preanswered = preanswered
    try:
        if tcp is not None:
            ls.start_tcp(*tcp)
        else:
            ls.start_io(stdin=stdin)
    finally:
        if ls.pool is not None:
            ls.pool.close_now()
    return 0
