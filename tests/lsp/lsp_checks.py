"""Spec-conformance checks of what the server sends, against the client's capabilities.

pytest-lsp checks a few methods itself (and warns ``LspSpecificationWarning``); these cover what
this server sends. Each check returns a list of problems (empty: conforming); results of
requests are also registered with pytest-lsp (``check_result_for``) so that a violation is a
warning raised where the request is made (an error in these tests).
"""
from __future__ import annotations

import re
from typing import Any, List, Optional, Sequence

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pytest_lsp import checks as pl_checks


def units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


_EOL = re.compile(r"\r\n|\r|\n")


def lsp_lines(text: str) -> List[str]:
    """Lines as LSP counts them (only \\n, \\r\\n, \\r end a line)."""
    return _EOL.split(text)


def check_range(rng: lsp.Range, text: Optional[str], encoding: str, what: str) -> List[str]:
    problems = []
    s, e = rng.start, rng.end
    if (s.line, s.character) > (e.line, e.character):
        problems.append(f"{what}: range start {s} after end {e}")
    if text is None:
        return problems
    lines = lsp_lines(text)
    for p, name in ((s, "start"), (e, "end")):
        if p.line < 0 or p.character < 0:
            problems.append(f"{what}: negative {name} position {p}")
        elif p.line >= len(lines):
            problems.append(f"{what}: {name} line {p.line} past the document ({len(lines)} lines)")
        elif p.character > units(lines[p.line], encoding):
            problems.append(f"{what}: {name} character {p.character} past the end of line {p.line} "
                            f"({units(lines[p.line], encoding)} {encoding} units)")
    return problems


def check_diagnostic(d: lsp.Diagnostic, caps: lsp.ClientCapabilities, text: Optional[str], encoding: str,
                     pull: bool) -> List[str]:
    # LSP 3.17 declares these for both models under publishDiagnostics; 3.18 also under
    # textDocument.diagnostic (pulled diagnostics).
    bases = ("text_document.publish_diagnostics", "text_document.diagnostic") if pull else \
        ("text_document.publish_diagnostics",)

    def supports(name: str) -> bool:
        return any(get_capability(caps, f"{b}.{name}", False) for b in bases)

    problems = check_range(d.range, text, encoding, f"diagnostic {d.code}")
    if d.related_information and not supports("related_information"):
        problems.append(f"diagnostic {d.code}: relatedInformation sent to a client without relatedInformation support")
    if d.code_description and not supports("code_description_support"):
        problems.append(f"diagnostic {d.code}: codeDescription sent to a client without codeDescriptionSupport")
    if d.data is not None and not supports("data_support"):
        problems.append(f"diagnostic {d.code}: data sent to a client without dataSupport")
    if d.tags:
        allowed = []
        for b in bases:
            allowed += get_capability(caps, f"{b}.tag_support.value_set", []) or []
        for t in d.tags:
            if t not in allowed:
                problems.append(f"diagnostic {d.code}: tag {t} not in the client's tagSupport")
    if d.severity is not None and int(d.severity) not in (1, 2, 3, 4):
        problems.append(f"diagnostic {d.code}: severity {d.severity}")
    if not d.message:
        problems.append(f"diagnostic {d.code}: empty message")
    return problems


def check_workspace_edit(edit: lsp.WorkspaceEdit, caps: lsp.ClientCapabilities, versions, texts, encoding: str
                         ) -> List[str]:
    """``versions``/``texts``: the client's current document versions and texts, by URI."""
    problems = []
    doc_changes = get_capability(caps, "workspace.workspace_edit.document_changes", False)
    if edit.document_changes is not None and not doc_changes:
        problems.append("WorkspaceEdit.documentChanges sent to a client without documentChanges support")
    if edit.change_annotations and not get_capability(caps, "workspace.workspace_edit.change_annotation_support"):
        problems.append("WorkspaceEdit.changeAnnotations sent to a client without changeAnnotationSupport")
    for change in edit.document_changes or []:
        if not isinstance(change, lsp.TextDocumentEdit):
            problems.append(f"resource operation {type(change).__name__} in a WorkspaceEdit")
            continue
        uri = change.text_document.uri
        if change.text_document.version is not None and versions.get(uri) != change.text_document.version:
            problems.append(f"edit for {uri} at version {change.text_document.version}, "
                            f"the client has version {versions.get(uri)}")
        for e in change.edits:
            problems += check_range(e.range, texts.get(uri), encoding, "text edit")
    for uri, edits in (edit.changes or {}).items():
        for e in edits:
            problems += check_range(e.range, texts.get(uri), encoding, "text edit")
    return problems


def check_code_actions(result: Optional[Sequence[Any]], caps: lsp.ClientCapabilities) -> List[str]:
    problems: List[str] = []
    if not result:
        return problems
    literal = get_capability(caps, "text_document.code_action.code_action_literal_support") is not None
    for item in result:
        if isinstance(item, lsp.Command):
            continue
        if not literal:
            problems.append(f"CodeAction literal {item.title!r} sent to a client without codeActionLiteralSupport")
            continue
        if item.is_preferred is not None and not get_capability(caps, "text_document.code_action.is_preferred_support", False):
            problems.append(f"isPreferred on {item.title!r} for a client without isPreferredSupport")
        if item.disabled is not None and not get_capability(caps, "text_document.code_action.disabled_support", False):
            problems.append(f"disabled on {item.title!r} for a client without disabledSupport")
        if item.data is not None and not get_capability(caps, "text_document.code_action.data_support", False):
            problems.append(f"data on {item.title!r} for a client without dataSupport")
        if item.edit is None and item.command is None:
            props = get_capability(caps, "text_document.code_action.resolve_support.properties", []) or []
            if "edit" not in props:
                problems.append(f"{item.title!r} has neither edit nor command and the client cannot resolve edits")
        if item.edit is not None and item.edit.document_changes is not None and not get_capability(
                caps, "workspace.workspace_edit.document_changes", False):
            problems.append(f"{item.title!r}: documentChanges for a client without documentChanges support")
    return problems


def check_hover(result: Optional[lsp.Hover], caps: lsp.ClientCapabilities) -> List[str]:
    if result is None:
        return []
    problems = []
    formats = get_capability(caps, "text_document.hover.content_format", None)
    contents = result.contents
    if isinstance(contents, lsp.MarkupContent):
        if formats is not None and contents.kind not in formats:
            problems.append(f"hover in {contents.kind.value} for a client that accepts {formats}")
    elif not isinstance(contents, (str, list, lsp.MarkedStringWithLanguage)):
        problems.append(f"hover contents of type {type(contents).__name__}")
    return problems


def check_pull_report(result: Any, caps: lsp.ClientCapabilities) -> List[str]:
    if get_capability(caps, "text_document.diagnostic") is None:
        return ["textDocument/diagnostic answered for a client that never declared pull diagnostics"]
    return []


_REGISTERED = False


def register_with_pytest_lsp() -> None:
    """Result checks run by pytest-lsp inside every request (violations warn
    LspSpecificationWarning, turned into errors by these tests)."""
    global _REGISTERED
    if _REGISTERED:
        return
    _REGISTERED = True

    def _warn(problems: List[str]) -> None:
        assert not problems, "; ".join(problems)

    for method, fn in (
        (lsp.TEXT_DOCUMENT_HOVER, lambda caps, r: _warn(check_hover(r, caps))),
        (lsp.TEXT_DOCUMENT_CODE_ACTION, lambda caps, r: _warn(check_code_actions(r, caps))),
        (lsp.CODE_ACTION_RESOLVE, lambda caps, r: _warn(check_code_actions([r] if r else [], caps))),
        (lsp.TEXT_DOCUMENT_DIAGNOSTIC, lambda caps, r: _warn(check_pull_report(r, caps))),
    ):
        if method not in pl_checks.RESULT_CHECKS:
            pl_checks.check_result_for(method=method)(fn)

    def registration(caps: lsp.ClientCapabilities, params: lsp.RegistrationParams) -> None:
        dyn = {
            lsp.WORKSPACE_DID_CHANGE_CONFIGURATION: "workspace.did_change_configuration.dynamic_registration",
            lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES: "workspace.did_change_watched_files.dynamic_registration",
        }
        for reg in params.registrations:
            path = dyn.get(reg.method)
            assert path is None or get_capability(caps, path, False), \
                f"client/registerCapability for {reg.method} without dynamicRegistration"

    def apply_edit(caps: lsp.ClientCapabilities, params: lsp.ApplyWorkspaceEditParams) -> None:
        assert get_capability(caps, "workspace.apply_edit", False), "workspace/applyEdit to a client without applyEdit"

    def refresh(caps: lsp.ClientCapabilities, params: Any) -> None:
        assert get_capability(caps, "workspace.diagnostics.refresh_support", False), \
            "workspace/diagnostic/refresh to a client without refreshSupport"

    for method, fn in ((lsp.CLIENT_REGISTER_CAPABILITY, registration), (lsp.WORKSPACE_APPLY_EDIT, apply_edit),
                       (lsp.WORKSPACE_DIAGNOSTIC_REFRESH, refresh)):
        if method not in pl_checks.PARAMS_CHECKS:
            pl_checks.check_params_of(method=method)(fn)
