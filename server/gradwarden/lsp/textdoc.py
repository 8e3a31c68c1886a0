"""pygls documents with LSP's line semantics and cached lines.

pygls' ``TextDocument.lines`` splits with ``str.splitlines`` (which also breaks at form feeds
and Unicode line separators, so an incremental edit after such a character lands on the
wrong line) and recomputes the split on every access. This subclass splits only at
``\\n``/``\\r\\n``/``\\r`` and caches the split until the text changes.
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

from pygls.workspace import TextDocument, Workspace

from gradwarden.lsp.positions import split_lines


class GWTextDocument(TextDocument):
    _lines_cache: Optional[Tuple[int, Sequence[str]]] = None

    @property
    def lines(self) -> Sequence[str]:  # type: ignore[override]
        source = self.source
        cached = self._lines_cache
        if cached is not None and cached[0] == id(source) and self._lines_src is source:
            return cached[1]
        lines = tuple(split_lines(source, keepends=True))
        self._lines_cache = (id(source), lines)
        self._lines_src = source
        return lines

    _lines_src: Optional[str] = None


class GWWorkspace(Workspace):
    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None):  # type: ignore[override]
        return GWTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


def upgrade_workspace(workspace: Workspace) -> Workspace:
    """Switch a freshly created pygls workspace to GW documents (before any is opened)."""
    if not isinstance(workspace, GWWorkspace):
        workspace.__class__ = GWWorkspace
    return workspace
