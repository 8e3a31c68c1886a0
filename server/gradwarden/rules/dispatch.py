"""Turns interpreter events into Diagnostics: the owning rule words the message, picks the
severity, and attaches fix suggestions as data (with a minimal textual edit when one is
obvious from the source; the libcst fixer refines them)."""
from __future__ import annotations

import string
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Severity, Span
from gradwarden.engine.events import Event
from gradwarden.engine.source import SourceText
from gradwarden.rules.catalog import RULES

_BY_EVENT = {r.event: r for r in RULES if r.event}


class _Facts(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _format(template: str, facts: Dict[str, Any]) -> str:
    return string.Formatter().vformat(template, (), _Facts(facts))


def events_to_diagnostics(events: Sequence[Event], filename: str, src: SourceText) -> List[Diagnostic]:
    out: Dict[Tuple[str, int, int], Diagnostic] = {}
    for ev in events:
        rule = _BY_EVENT.get(ev.kind)
        if rule is None:
            continue
        severity = Severity(ev.severity) if ev.severity else rule.severity
        diag = Diagnostic(
            code=rule.code,
            message=_format(rule.message, ev.facts),
            severity=severity,
            filename=filename,
            span=ev.span,
            related=tuple(ev.related),
            fixes=tuple(fixes_for(rule.code, ev, src)),
            rule=rule.name,
            timeline=tuple(ev.timeline),
        )
        key = (diag.code, diag.span.row, diag.span.column)
        if key not in out:
            out[key] = diag
    return sorted(out.values(), key=lambda d: d.sort_key())


# --------------------------------------------------------------------------- fixes as data
def _insert_after(span: Optional[Span], text: str) -> Tuple[Edit, ...]:
    if span is None:
        return ()
    return (Edit(Span(span.end_row, span.end_column, span.end_row, span.end_column), text),)


def _indent(src: SourceText, row: int) -> str:
    line = src.line(row)
    return line[: len(line) - len(line.lstrip())]


def _is_name(text: str) -> bool:
    return bool(text) and text.replace("_", "a").replace(".", "a").isalnum() and not text[0].isdigit()


def _augassign_edit(ff: Dict[str, Any], src: SourceText) -> Tuple[Edit, ...]:
    span: Span = ff.get("stmt_span")
    if span is None or span.row != span.end_row:
        return ()
    line = src.line(span.row)
    stmt = line[span.column - 1: span.end_column - 1]
    op = ff.get("binop", "+")
    head, sep, rhs = stmt.partition(f"{op}=")
    if not sep:
        return ()
    target = head.strip()
    rhs = rhs.strip()
    simple = rhs.replace("_", "a").replace(".", "a").isalnum()
    rhs_text = rhs if simple else f"({rhs})"
    return (Edit(span, f"{target} = {target} {op} {rhs_text}"),)


def _retain_graph_edit(span: Optional[Span], src: SourceText) -> Tuple[Edit, ...]:
    if span is None:
        return ()
    line = src.line(span.end_row)
    end = span.end_column - 1  # 0-based index just after ')'
    if end <= 0 or end > len(line) or line[end - 1] != ")":
        return ()
    inner_empty = line[:end].rstrip().endswith("()")
    pos = Span(span.end_row, end, span.end_row, end)
    return (Edit(pos, "retain_graph=True" if inner_empty else ", retain_graph=True"),)


def fixes_for(code: str, ev: Event, src: SourceText) -> List[Fix]:
    ff = ev.fix_facts
    form = ff.get("form")
    fixes: List[Fix] = []
    if code == "GW201":
        target = ff.get("target_text", "")
        if form == "augassign":
            fixes.append(Fix("augassign_to_binop", f"Write `{target} = {target} {ff.get('binop', '+')} ...` (out of place)",
                             safe=True, preferred=True, target=ff.get("stmt_span"), edits=_augassign_edit(ff, src)))
        elif form == "module_inplace":
            fixes.append(Fix("inplace_false", "Construct the module with `inplace=False`", safe=True, preferred=True,
                             target=ff.get("module_span")))
        elif form == "method":
            fixes.append(Fix("inplace_to_outofplace", f"Use the out-of-place op: `{target} = {target}.{str(ff.get('op', '')).strip('.()').rstrip('_')}(...)`",
                             safe=True, preferred=True, target=ff.get("stmt_span"), params=(("name", target),)))
        if _is_name(target):
            row = (ff.get("stmt_span") or ev.span).row
            edit = Edit(Span(row, 1, row, 1), f"{_indent(src, row)}{target} = {target}.clone()\n")
            fixes.append(Fix("clone", f"Clone `{target}` before writing to it", safe=True,
                             preferred=form not in ("augassign", "module_inplace", "method"),
                             target=ff.get("stmt_span"), edits=(edit,), params=(("name", target),)))
    elif code == "GW101":
        fixes.append(Fix("no_grad", "Do the update under `with torch.no_grad():`", safe=True, preferred=True,
                         target=ff.get("stmt_span") or ev.span))
    elif code in ("GW301",):
        fixes.append(Fix("clone", "Materialise the expanded tensor with `.clone()`", safe=True, preferred=True,
                         target=ff.get("expand_span"), edits=_insert_after(ff.get("expand_span"), ".clone()")))
    elif code in ("GW302", "GW304"):
        fixes.append(Fix("clone", "Clone the right-hand side", safe=True, preferred=True, target=ff.get("rhs_span"),
                         edits=_insert_after(ff.get("rhs_span"), ".clone()")))
    elif code == "GW303":
        fixes.append(Fix("clone", "Start from `grad_output.clone()`", safe=True, preferred=True, target=ev.span,
                         params=(("name", "grad_output"),)))
    elif code == "GW202":
        fixes.append(Fix("inplace_to_outofplace", "Compute out of place instead of modifying a saved tensor",
                         safe=True, preferred=True, target=ff.get("stmt_span") or ev.span))
    elif code in ("GW305", "GW306"):
        if form == "augassign":
            fixes.append(Fix("augassign_to_binop", "Write it out of place", safe=True, preferred=True,
                             target=ff.get("stmt_span"), edits=_augassign_edit(ff, src)))
    elif code == "GW401":
        fixes.append(Fix("retain_graph", "Keep the graph for the later backward: `retain_graph=True`", safe=True,
                         preferred=True, target=ff.get("backward_span"),
                         edits=_retain_graph_edit(ff.get("backward_span"), src)))
    elif code == "GW402":
        fixes.append(Fix("detach", "Detach the carried tensor before using it again", safe=False, preferred=True,
                         target=ff.get("use_span")))
    elif code == "GW403":
        fixes.append(Fix("detach", "Create it without a graph (`.detach()`), or recompute it inside the loop",
                         safe=False, preferred=True, target=ff.get("node_span")))
    elif code in ("GW501", "GW502"):
        fixes.append(Fix("move_step", "Call step() after the later backward", safe=False, preferred=True,
                         target=ev.span, params=(("backward_row", str(ff.get("backward_span").row)
                                                  if ff.get("backward_span") else ""),)))
    elif code == "GW601":
        fixes.append(Fix("data_to_detach", "Write to a clone (`.detach().clone()`) instead of through `.data`",
                         safe=False, preferred=True, target=ev.span))
    elif code == "GW503":
        fixes.append(Fix("detach", "Detach the other model's output where it feeds this loss", safe=False,
                         preferred=True, target=ev.span))
    return fixes
