"""``textDocument/codeLens``: "Confirm with a debug run" above the first autograd diagnostic of a
Python file on disk. The lens runs ``gradwarden.debugRun`` on the file; afterwards its title
says what the run found ("Debug run: 1 confirmed, 0 not reproduced — run again") and the
diagnostics are marked in place (``verdicts``). Pure: the document's diagnostics in, lenses out.
"""
from __future__ import annotations

from typing import Optional, Sequence

from lsprotocol import types as lsp

from gradwarden.lsp.verdicts import summary_text

DEBUG_RUN = "gradwarden.debugRun"
PARSE_ERROR = "GW001"  # not an autograd hazard: nothing for a run to confirm


def candidates(diags: Sequence[lsp.Diagnostic]) -> list:
    """The diagnostics a debug run can speak to (ours, not a parse error)."""
    return [d for d in diags if (d.source or "").startswith("gradwarden") and str(d.code) != PARSE_ERROR]


def code_lenses(uri: str, diags: Sequence[lsp.Diagnostic], *, last_run: Optional[dict] = None,
                running: bool = False) -> list:
    """The lens of document ``uri`` (a ``file:`` URI of a Python file; notebooks are run by
    their kernel, unsaved buffers cannot be run): none when it has nothing to confirm."""
    if not uri.startswith("file:"):
        return []
    found = candidates(diags)
    if not found and last_run is None:
        return []
    line = min((d.range.start.line for d in found), default=0)
    if running:
        title = "Debug run in progress…"
    elif last_run is not None:
        title = f"Debug run: {summary_text(last_run)} — run again"
    else:
        n = len(found)
        title = f"Confirm with a debug run ({n} finding{'' if n == 1 else 's'})"
    where = lsp.Range(start=lsp.Position(line=line, character=0), end=lsp.Position(line=line, character=0))
    return [lsp.CodeLens(range=where, command=lsp.Command(title=title, command=DEBUG_RUN, arguments=[{"uri": uri}]))]


__all__ = ["candidates", "code_lenses"]
