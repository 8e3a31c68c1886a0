"""Pull diagnostics (``textDocument/diagnostic``): what a request is answered with while an
analysis is pending, and the refresh owed afterwards.

- A request for a state whose analysis is running waits for it up to ``pullWaitMs``; then it is
  answered with the last result, carried to the current text (never with an empty report while
  a result exists), and the unit owes the client a ``workspace/diagnostic/refresh``, sent as
  soon as the new result is stored (clients that support it pull again at once).
- With no result at all yet (the first analysis of a document), or for a client that cannot be
  told to pull again (no ``refreshSupport``: Neovim 0.11), the request waits for the result: the
  analysis ends, fails or times out (``analysisTimeout``), and each of those gives one.
"""
from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Optional, Set

from lsprotocol import types as lsp

if TYPE_CHECKING:  # pragma: no cover
    from gradwarden.lsp.analysis import AnalysisService, Result
    from gradwarden.lsp.context import ServerContext

log = logging.getLogger("gradwarden.lsp.pull")


async def result_for_pull(analysis: "AnalysisService", key: str, wait_s: float,
                          owed: Set[str], can_refresh: bool = True) -> Optional["Result"]:
    """The result a pull request for ``key`` reports (see the module docstring); adds ``key``
    to ``owed`` when it answers with an older state's result."""
    current = analysis.current(key)
    if current is not None:
        return current
    if not can_refresh:
        return await analysis.wait(key)
    if wait_s > 0:
        try:
            return await asyncio.wait_for(analysis.wait(key), wait_s)
        except asyncio.TimeoutError:
            pass
    return await _wait_or_latest(analysis, key, owed)


async def _wait_or_latest(analysis: "AnalysisService", key: str, owed: Set[str]) -> Optional["Result"]:
    provisional = analysis.provisional(key)
    if provisional is None:
        return await analysis.wait(key)  # nothing to show yet: the first result is worth waiting for
    owed.add(key)
    log.debug("pull for %s answered with the last result (generation %d); a refresh follows",
              key, provisional.generation)
    return provisional


def result_id(ls: "ServerContext", result: "Result") -> str:
    mark = "p" if result.provisional else ""
    return f"{result.generation}{mark}.{ls.resolver.generation}.{len(result.carried)}.{ls.runtime_generation}"


def after_result(ls: "ServerContext", key: str) -> None:
    """A result was stored for ``key``: send the refresh a provisional answer promised."""
    if key not in ls.pull_refresh_owed:
        return
    ls.pull_refresh_owed.discard(key)
    if not ls.features.diagnostic_refresh:
        return  # the client pulls again on its next change
    try:
        ls.workspace_diagnostic_refresh(None)
        ls.pull_refreshes += 1
    except Exception:  # noqa: BLE001
        log.debug("diagnostic refresh failed", exc_info=True)


def empty_report() -> lsp.RelatedFullDocumentDiagnosticReport:
    return lsp.RelatedFullDocumentDiagnosticReport(items=[], result_id=None)
