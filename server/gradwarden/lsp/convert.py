"""Conversions between the engine's model and lsprotocol types, shaped by what the client said
it supports (``ClientFeatures``). No pygls here: lsprotocol's attrs classes only."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from lsprotocol import types as lsp

from gradwarden.engine.diagnostic import Diagnostic, Edit, Span
from gradwarden.lsp.documents import Located
from gradwarden.lsp.positions import UTF16, LineIndex

SOURCE = "gradwarden"
FIX_ALL_KIND = "source.fixAll.gradwarden"


def _get(obj: Any, path: str, default: Any = None) -> Any:
    for part in path.split("."):
        if obj is None:
            return default
        obj = getattr(obj, part, None)
    return default if obj is None else obj


@dataclass(frozen=True)
class ClientFeatures:
    """The client capabilities the server's answers depend on."""

    encoding: str = UTF16
    related_information: bool = False
    code_description: bool = False
    diagnostic_data: bool = False
    publish_version: bool = False
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    code_lens_refresh: bool = False
    hover_markdown: bool = False
    code_action_literals: bool = False
    code_action_kinds: tuple = ()
    is_preferred: bool = False
    code_action_disabled: bool = False
    code_action_data: bool = False
    resolve_edit: bool = False
    document_changes: bool = False
    apply_edit: bool = False
    work_done_progress: bool = False
    configuration: bool = False
    dynamic_configuration: bool = False
    dynamic_watched_files: bool = False
    notebooks: bool = False
    show_message_request: bool = False

    @classmethod
    def from_capabilities(cls, caps: Optional[lsp.ClientCapabilities], encoding: str = UTF16) -> "ClientFeatures":
        if caps is None:
            return cls(encoding=encoding)
        hover_formats = _get(caps, "text_document.hover.content_format", []) or []
        resolve_props = _get(caps, "text_document.code_action.resolve_support.properties", []) or []
        kinds = _get(caps, "text_document.code_action.code_action_literal_support.code_action_kind.value_set", []) or []
        return cls(
            encoding=encoding,
            related_information=bool(_get(caps, "text_document.publish_diagnostics.related_information", False)
                                     or _get(caps, "text_document.diagnostic.related_information", False)),
            code_description=bool(_get(caps, "text_document.publish_diagnostics.code_description_support", False)
                                  or _get(caps, "text_document.diagnostic.code_description_support", False)),
            diagnostic_data=bool(_get(caps, "text_document.publish_diagnostics.data_support", False)
                                 or _get(caps, "text_document.diagnostic.data_support", False)),
            publish_version=bool(_get(caps, "text_document.publish_diagnostics.version_support", False)),
            pull_diagnostics=_get(caps, "text_document.diagnostic") is not None,
            diagnostic_refresh=bool(_get(caps, "workspace.diagnostics.refresh_support", False)),
            code_lens_refresh=bool(_get(caps, "workspace.code_lens.refresh_support", False)),
            hover_markdown=lsp.MarkupKind.Markdown in [lsp.MarkupKind(k) if isinstance(k, str) else k
                                                       for k in hover_formats],
            code_action_literals=_get(caps, "text_document.code_action.code_action_literal_support") is not None,
            code_action_kinds=tuple(str(getattr(k, "value", k)) for k in kinds),
            is_preferred=bool(_get(caps, "text_document.code_action.is_preferred_support", False)),
            code_action_disabled=bool(_get(caps, "text_document.code_action.disabled_support", False)),
            code_action_data=bool(_get(caps, "text_document.code_action.data_support", False)),
            resolve_edit="edit" in resolve_props,
            document_changes=bool(_get(caps, "workspace.workspace_edit.document_changes", False)),
            apply_edit=bool(_get(caps, "workspace.apply_edit", False)),
            work_done_progress=bool(_get(caps, "window.work_done_progress", False)),
            configuration=bool(_get(caps, "workspace.configuration", False)),
            dynamic_configuration=bool(_get(caps, "workspace.did_change_configuration.dynamic_registration", False)),
            dynamic_watched_files=bool(_get(caps, "workspace.did_change_watched_files.dynamic_registration", False)),
            notebooks=_get(caps, "notebook_document") is not None,
            show_message_request=_get(caps, "window.show_message") is not None,
        )


# --------------------------------------------------------------------------- ranges
def to_range(span: Span, index: LineIndex) -> lsp.Range:
    sl, sc = index.to_lsp(span.row, span.column)
    el, ec = index.to_lsp(span.end_row, span.end_column)
    if (el, ec) < (sl, sc):
        el, ec = sl, sc
    return lsp.Range(start=lsp.Position(line=sl, character=sc), end=lsp.Position(line=el, character=ec))


def visible_span(span: Span, index: LineIndex) -> Span:
    """An empty span (a parse error's point) widened so that every editor shows it: to the end
    of its line, or back over the last character when it sits at the end."""
    if (span.row, span.column) != (span.end_row, span.end_column):
        return span
    end = index.line_end(span.row)
    if span.column < end:
        return Span(span.row, span.column, span.row, end)
    if span.column > 1:
        return Span(span.row, span.column - 1, span.row, span.column)
    return span


def from_range(rng: lsp.Range, index: LineIndex) -> Span:
    row, col = index.from_lsp(rng.start.line, rng.start.character)
    end_row, end_col = index.from_lsp(rng.end.line, rng.end.character)
    return Span(row, col, end_row, end_col)


def text_edit(edit: Edit, index: LineIndex) -> lsp.TextEdit:
    return lsp.TextEdit(range=to_range(edit.span, index), new_text=edit.content)


# --------------------------------------------------------------------------- diagnostics
def rule_url(code: str) -> Optional[str]:
    from gradwarden.rules import get_rule

    rule = get_rule(code)
    if rule is None:
        return None
    from gradwarden.formats import rule_help_uri

    return rule_help_uri(rule)


Labeler = Callable[[str, int], str]  # (uri, row) -> "line 12" / "cell 3, line 4"


def default_label(uri: str, row: int) -> str:
    return f"line {row}"


def to_lsp_diagnostic(
    item: Located,
    index: LineIndex,
    features: ClientFeatures,
    *,
    indexes: Optional[Mapping[str, LineIndex]] = None,
    label: Labeler = default_label,
    data: Optional[Dict[str, Any]] = None,
) -> lsp.Diagnostic:
    """``indexes``: line indexes of other documents (related locations in other cells)."""
    d = item.diagnostic
    message = d.message
    related_info = None
    if d.related:
        if features.related_information:
            related_info = []
            for r, ruri in zip(d.related, item.related_uris):
                rindex = index if ruri == item.uri else (indexes or {}).get(ruri, index)
                related_info.append(lsp.DiagnosticRelatedInformation(
                    location=lsp.Location(uri=ruri, range=to_range(r.span, rindex)),
                    message=r.message,
                ))
        else:
            notes = [f"  {label(ruri, r.span.row)}: {r.message}" for r, ruri in zip(d.related, item.related_uris)]
            message = message + "\n" + "\n".join(notes)
    href = rule_url(d.code) if features.code_description else None
    return lsp.Diagnostic(
        range=to_range(visible_span(d.span, index), index),
        message=message,
        severity=lsp.DiagnosticSeverity(int(d.severity)),
        code=d.code,
        code_description=lsp.CodeDescription(href=href) if href else None,
        source=SOURCE,
        related_information=related_info,
        data=data if features.diagnostic_data else None,
    )


def ranges_overlap(a: lsp.Range, b: lsp.Range) -> bool:
    """Touching counts (a cursor at the end of a flagged range is on it)."""
    a0, a1 = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b0, b1 = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a0 <= b1 and b0 <= a1


def same_diagnostic(a: lsp.Diagnostic, b: lsp.Diagnostic) -> bool:
    return (
        a.range == b.range
        and str(a.code) == str(b.code)
        and a.message.split("\n", 1)[0] == b.message.split("\n", 1)[0]
    )


# --------------------------------------------------------------------------- workspace edits
def workspace_edit(
    edits_by_uri: Mapping[str, Sequence[lsp.TextEdit]],
    versions: Mapping[str, Optional[int]],
    features: ClientFeatures,
) -> lsp.WorkspaceEdit:
    """Edits against the document versions they were computed for (``documentChanges`` when the
    client supports it, so a stale edit is refused rather than misapplied)."""
    if features.document_changes:
        return lsp.WorkspaceEdit(document_changes=[
            lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=versions.get(uri)),
                edits=list(edits),
            )
            for uri, edits in edits_by_uri.items()
        ])
    return lsp.WorkspaceEdit(changes={uri: list(edits) for uri, edits in edits_by_uri.items()})


def minimal_edit(old: str, new: str, index: LineIndex) -> Optional[lsp.TextEdit]:
    """One TextEdit turning ``old`` into ``new``: the lines that differ are replaced whole (the
    common leading and trailing lines are left alone); None when the texts are equal."""
    if old == new:
        return None
    from gradwarden.lsp.positions import split_lines

    a = split_lines(old, keepends=True)
    b = split_lines(new, keepends=True)
    n = min(len(a), len(b))
    head = 0
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = sum(len(x) for x in a[:head])
    end_old = len(old) - sum(len(x) for x in a[len(a) - tail:])
    end_new = len(new) - sum(len(x) for x in b[len(b) - tail:])
    s_row, s_col = offset_to_position(old, start)
    e_row, e_col = offset_to_position(old, end_old)
    return lsp.TextEdit(range=to_range(Span(s_row, s_col, e_row, e_col), index), new_text=new[start:end_new])


def offset_to_position(text: str, offset: int) -> tuple:
    """Character offset -> (1-based row, 1-based column), rows as LSP counts them."""
    row = 1
    line_start = 0
    i = 0
    while True:
        j_n = text.find("\n", i, offset)
        j_r = text.find("\r", i, offset)
        candidates = [j for j in (j_n, j_r) if j != -1]
        if not candidates:
            break
        j = min(candidates)
        if text[j] == "\r" and j + 1 < len(text) and text[j + 1] == "\n":
            if j + 1 >= offset:  # offset between \r and \n: stay on this line
                break
            j += 1
        row += 1
        line_start = j + 1
        i = j + 1
    return row, offset - line_start + 1


def kind_matches(kind: str, only: Optional[Sequence[Any]]) -> bool:
    """Does an action of ``kind`` answer a request restricted to ``only``?"""
    if not only:
        return True
    for o in only:
        value = str(getattr(o, "value", o))
        if value == "" or kind == value or kind.startswith(value + "."):
            return True
    return False


def diagnostics_by_uri(items: Sequence[Located]) -> Dict[str, List[Located]]:
    out: Dict[str, List[Located]] = {}
    for it in items:
        out.setdefault(it.uri, []).append(it)
    return out


def severity_name(d: Diagnostic) -> str:
    return d.severity.label
