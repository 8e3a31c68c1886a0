"""What the helper modules (actions, commands, prefetch, pull, fix_edits) see of the running
server: a Protocol, so that they never import ``server.py`` (which imports them) — not even for
type hints. ``server.GradwardenServer`` is the one implementation; tests may pass any object
with these members.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, Protocol, Set, Tuple

if TYPE_CHECKING:  # pragma: no cover
    from lsprotocol import types as lsp

    from gradwarden.lsp.analysis import AnalysisService, Result
    from gradwarden.lsp.convert import ClientFeatures
    from gradwarden.lsp.documents import Located
    from gradwarden.lsp.options import ServerOptions, SettingsResolver
    from gradwarden.lsp.prepared import Prepared
    from gradwarden.lsp.worker import WorkerPool

# unit -> ((result generation, settings generation), {(diagnostic index, fix index) | "all": edits})
FixCache = Dict[str, Tuple[Tuple[int, int], Dict[Any, Any]]]


class ServerContext(Protocol):
    analysis: Optional["AnalysisService"]
    pool: Optional["WorkerPool"]
    features: "ClientFeatures"
    options: "ServerOptions"
    resolver: "SettingsResolver"
    pull: bool
    fix_cache: FixCache
    prepared: "Prepared"
    runtime_findings: Dict[str, Tuple["Result", list]]
    runtime_generation: int
    debug_summaries: Dict[str, Dict[str, int]]
    debug_running: Set[str]
    lens_answered: Dict[str, Any]
    pull_refresh_owed: Set[str]
    pull_refreshes: int
    hovers_answered: int
    progress_cancelled: Set[str]
    workspace_published: Set[str]
    workspace: Any  # pygls' Workspace
    work_done_progress: Any  # pygls' progress helper

    def unit_of(self, uri: str) -> Optional[str]: ...

    def is_notebook(self, key: str) -> bool: ...

    def located(self, result: "Result") -> List["Located"]: ...

    def lsp_items(self, result: "Result", uri: Optional[str] = None
                  ) -> Iterator[Tuple[int, "Located", "lsp.Diagnostic"]]: ...

    def latest_for_request(self, key: str) -> Optional["Result"]: ...

    async def wait_result(self, key: str, urgent: bool = False) -> Optional["Result"]: ...

    def publish(self, key: str, result: "Result") -> None: ...

    def _publish(self, uri: str, diags: List["lsp.Diagnostic"], version: Optional[int]) -> None: ...

    def show(self, message: str, level: Any = ...) -> None: ...

    def log_to_client(self, message: str, level: Any = ...) -> None: ...

    # pygls' own
    async def workspace_apply_edit_async(self, params: "lsp.ApplyWorkspaceEditParams") -> Any: ...

    def workspace_diagnostic_refresh(self, params: None) -> Any: ...

    def workspace_code_lens_refresh(self, params: None) -> Any: ...
