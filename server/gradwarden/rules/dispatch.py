"""Turns interpreter events into Diagnostics: the owning rule words the message, picks the
severity, and attaches fix suggestions as data (with a minimal textual edit when one is
obvious from the source; the libcst fixer refines them)."""
from __future__ import annotations

import re
import string
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.diagnostic import Diagnostic, Edit, Fix, Related, Severity, Span
from gradwarden.engine.events import Event
from gradwarden.engine.front.source import SourceText
from gradwarden.rules.catalog import RULES
from gradwarden.rules.fixpolicy import vet_fixes

_BY_EVENT = {r.event: r for r in RULES if r.event}


class _Facts(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def _format(template: str, facts: Dict[str, Any]) -> str:
    return string.Formatter().vformat(template, (), _Facts(facts))


def events_to_diagnostics(events: Sequence[Event], filename: str, src: SourceText,
                          others: Optional[Dict[str, SourceText]] = None) -> List[Diagnostic]:
    """``others``: the text of the project's other modules the analysis followed (absolute path
    -> text), for the events whose spans lie there (``Span.file``): such a finding is named by
    the file its primary span is in, its related places by theirs."""
    out: Dict[Tuple[str, str, int, int], Diagnostic] = {}
    names: Dict[Optional[str], str] = {None: filename}
    for ev in events:
        rule = _BY_EVENT.get(ev.kind)
        if rule is None:
            continue
        severity = Severity(ev.severity) if ev.severity else rule.severity
        home = ev.span.file
        if home is not None and (others is None or home not in others):
            continue  # a module whose text the analysis no longer holds: nowhere to show it
        here = names.get(home) or names.setdefault(home, display_name(home, filename))
        fixes = fixes_for(rule.code, ev, others[home] if home is not None else src)  # type: ignore[index]
        diag = Diagnostic(
            code=rule.code,
            message=_format(rule.message, ev.facts),
            severity=severity,
            filename=here,
            span=_plain(ev.span),
            related=_related_in(ev.related, home, filename, names),
            fixes=tuple(_plain_fix(f) for f in vet_fixes(severity, [f for f in fixes if _fix_in(f, home)])),
            rule=rule.name,
            timeline=_related_in(ev.timeline, home, filename, names),
            assumes_backward=bool(ev.facts.get("assumes_backward")),
        )
        key = (diag.filename, diag.code, diag.span.row, diag.span.column)
        if key not in out:
            out[key] = diag
    return sorted(out.values(), key=lambda d: d.sort_key())


def display_name(path: str, like: str) -> str:
    """How a run names another file of the project: as it names the analysed file ``like``
    (relative to the working directory when that is, else absolute)."""
    import os

    if os.path.isabs(like):
        return path
    for base in (os.path.realpath(os.getcwd()), os.path.abspath(os.getcwd())):
        try:
            rel = os.path.relpath(path, base)
        except ValueError:
            continue
        if not rel.startswith(".."):
            return rel
    return path


def _plain(span: Span) -> Span:
    return Span(span.row, span.column, span.end_row, span.end_column) if span.file is not None else span


def _related_in(related: Sequence[Related], home: Optional[str], filename: str,
                names: Dict[Optional[str], str]) -> Tuple[Related, ...]:
    """Related places with the file each lies in, when not the finding's own (``home``)."""
    if home is None and all(r.span.file is None for r in related):
        return tuple(related)
    out = []
    for r in related:
        where = r.span.file
        if where == home:
            out.append(Related(_plain(r.span), r.message, r.kind, r.filename))
            continue
        name = names.get(where) or names.setdefault(where, display_name(where, filename))  # type: ignore[arg-type]
        out.append(Related(_plain(r.span), r.message, r.kind, r.filename or name))
    return tuple(out)


def _fix_in(fix: Fix, home: Optional[str]) -> bool:
    """A fix whose edits all lie in the finding's own file (edits carry no file of their own)."""
    spans = [e.span for e in fix.edits] + ([fix.target] if fix.target is not None else [])
    return all(s.file == home for s in spans)


def _plain_fix(fix: Fix) -> Fix:
    if all(e.span.file is None for e in fix.edits) and (fix.target is None or fix.target.file is None):
        return fix
    return replace(fix, target=_plain(fix.target) if fix.target is not None else None,
                   edits=tuple(Edit(_plain(e.span), e.content) for e in fix.edits))


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
    if not _is_name(target):
        return ()  # `x[i] += v` -> `x[i] = x[i] + v` would still write in place
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


def _sp(span: Optional[Span]) -> str:
    """A span as a Fix param (``row:col:end_row:end_col``; gradwarden.fixes.parse_span)."""
    return f"{span.row}:{span.column}:{span.end_row}:{span.end_column}" if span is not None else ""


def _p(**kw: Any) -> Tuple[Tuple[str, str], ...]:
    return tuple((k, str(v)) for k, v in kw.items() if v not in (None, ""))


def fixes_for(code: str, ev: Event, src: SourceText) -> List[Fix]:
    """The fix suggestions of one event, as data, in order of preference (the first one whose
    realisation applies to the source is used by ``--fix``; ``gradwarden.fixes`` realises
    them with libcst and refuses a fix whose assumption does not hold on the source).

    ``safe``: the forward values and the gradients that were right stay the same;
    unsafe fixes change gradient flow (``detach``, recomputation, reordering a step) or the
    values other aliases see."""
    if code.startswith("GW7"):
        from gradwarden.rules.flowfixes import flow_fixes

        return flow_fixes(code, ev)
    ff = ev.fix_facts
    facts = ev.facts
    form = ff.get("form")
    target = ff.get("target_text", "") or ""
    op = str(ff.get("op", ""))
    fixes: List[Fix] = []
    stmt = ff.get("stmt_span") or ev.span
    named = _is_name(target) and not _receiver_is_module(op)
    if code == "GW101":
        if form == "module_inplace":
            name = facts.get("name", "")
            fixes.append(Fix("clone", f"Apply the in-place module to a copy: `{name}.clone()`", safe=True,
                             preferred=True, target=ev.span, params=_p(mode="argument", name=name)))
            fixes.append(Fix("inplace_false", "Construct the module with `inplace=False`", safe=True,
                             target=ff.get("module_span")))
        elif form == "method" and _receiver_is_module(op):
            # `F.relu(x, inplace=True)` on an input that requires grad: an activation, not an
            # update of the leaf (no_grad would cut the gradient the input is there for)
            fixes.append(Fix("inplace_to_outofplace", "Apply it out of place (drop `inplace=True`)", safe=True,
                             preferred=True, target=ff.get("call_span") or ev.span))
        else:
            fixes.append(Fix("no_grad", "Do the update under `with torch.no_grad():`", safe=True, preferred=True,
                             target=stmt))
            if form == "augassign":
                fixes.append(Fix("augassign_to_binop", f"Write `{target} = {target} {ff.get('binop', '+')} ...` "
                                                       "(a new tensor; the leaf stays unchanged)",
                                 safe=False, target=stmt, edits=_augassign_edit(ff, src)))
    elif code == "GW201" and getattr(ff.get("write"), "kind", "") == "internal" and \
            "`softmax`" in getattr(ff.get("write"), "op", ""):
        # PyTorch's own forward-mode derivative of softmax writes in place (pytorch#188270)
        fixes.append(Fix("explicit_softmax", "Compute the softmax from exp and sum (same values; their forward-mode "
                                             "derivatives write nothing in place)", safe=True, preferred=True,
                         target=getattr(ff.get("write"), "span", None) or ev.span))
    elif code in ("GW201", "GW202", "GW305", "GW306"):
        if form == "augassign":
            fixes.append(Fix("augassign_to_binop", f"Write `{target} = {target} {ff.get('binop', '+')} ...` "
                                                   "(out of place)", safe=True, preferred=True, target=stmt,
                             edits=_augassign_edit(ff, src)))
        elif form == "method":
            short = op.strip("`.()").split("(")[0].rstrip("_") or "op"
            title = (f"Use the out-of-place op: `{target} = {target}.{short}(...)`" if named
                     else "Use the out-of-place op")
            fixes.append(Fix("inplace_to_outofplace", title, safe=True, preferred=True, target=stmt,
                             params=_p(name=target if named else "")))
        elif form == "module_inplace":
            write = ff.get("write")
            site = getattr(write, "site", None)
            module = op.split("(", 1)[0].strip("`. ")
            fixes.append(Fix("inplace_false", "Construct the module with `inplace=False`", safe=True,
                             preferred=True, target=ff.get("module_span"),
                             params=_p(site=_sp(site), module=module if module.isidentifier() else "")))
        if form == "setitem":
            # `f[i] = f[i - 1] * w`: the statement saves a view of what it writes into
            fixes.append(Fix("clone", "Clone the views of the written tensor that this statement reads",
                             safe=True, target=stmt, params=_p(mode="saved_source")))
        if named or form in ("setitem", "augassign", "method"):
            name = target if named else facts.get("name", "tensor")
            saved = _saved_name(ev)
            fixes.append(Fix("clone", f"Clone `{name}` before writing to it", safe=True,
                             preferred=form not in ("augassign", "module_inplace", "method"), target=stmt,
                             edits=_clone_line(ff, src, target) if named else (),
                             params=_p(mode="before_write", name=name, saved=saved)))
            fixes.append(Fix("clone", f"Clone `{name}` before writing to it (other aliases no longer see the write)",
                             safe=False, target=stmt, params=_p(mode="break_alias", name=name, saved=saved)))
    elif code == "GW203":
        # the write to a tensor a custom Function stashed on ctx: write out of place instead
        name = facts.get("name", "tensor")
        fixes.append(Fix("augassign_to_binop", f"Write `{name}` out of place", safe=True, preferred=True,
                         target=ev.span))
        fixes.append(Fix("inplace_to_outofplace", "Use the out-of-place op", safe=True, target=ev.span,
                         params=_p(name=name)))
        fixes.append(Fix("clone", f"Clone `{name}` before writing to it", safe=True, target=ev.span,
                         params=_p(mode="before_write", name=name)))
        fixes.append(Fix("clone", f"Clone `{name}` before writing to it (other aliases no longer see the write)",
                         safe=False, target=ev.span, params=_p(mode="break_alias", name=name)))
    elif code == "GW307":
        # never safe (rules/fixpolicy.py); the realiser offers it only where the syntax fixes the count
        fixes.append(Fix("complete_grads", "Return `None` for the inputs that need no gradient", safe=False,
                         preferred=True, target=ev.span, params=_p(got=facts.get("got"), want=facts.get("want"))))
    elif code == "GW309":
        fixes.append(Fix("none_gradient", "Return `None` for the non-tensor input", safe=True, preferred=True,
                         target=ev.span))
    elif code == "GW308":
        fixes.append(Fix("static_function", "Use the static-method API (`@staticmethod`, `ctx`, `Fn.apply`)",
                         safe=True, preferred=True, target=ev.span, params=_p(fn=facts.get("fn"))))
    elif code == "GW301":
        fixes.append(Fix("clone", "Materialise the expanded tensor with `.clone()`", safe=True, preferred=True,
                         target=ff.get("expand_span"), edits=_insert_after(ff.get("expand_span"), ".clone()"),
                         params=_p(mode="expr")))
    elif code in ("GW302", "GW304"):
        fixes.append(Fix("clone", "Clone the right-hand side", safe=True, preferred=True, target=ff.get("rhs_span"),
                         edits=_insert_after(ff.get("rhs_span"), ".clone()"), params=_p(mode="expr")))
    elif code == "GW303":
        fixes.append(Fix("clone", "Clone the incoming gradient before writing to it (`grad_output.clone()`)",
                         safe=True, preferred=True, target=stmt, params=_p(mode="grad_output",
                                                                           name=facts.get("name", ""))))
        if form == "method":
            fixes.append(Fix("inplace_to_outofplace", "Use the out-of-place op", safe=True, target=stmt,
                             params=_p(name=target)))
        elif form == "augassign":
            fixes.append(Fix("augassign_to_binop", "Write it out of place", safe=True, target=stmt,
                             edits=_augassign_edit(ff, src)))
    elif code == "GW401":
        fixes.append(Fix("retain_graph", "Keep the graph for the later backward: `retain_graph=True`", safe=True,
                         preferred=True, target=ff.get("backward_span"),
                         edits=_retain_graph_edit(ff.get("backward_span"), src)))
    elif code == "GW402":
        name = facts.get("name", "")
        bumped = bool(facts.get("bumped"))
        # a detach is a fix only when the backward still trains something without the carried
        # part (a hidden state); otherwise nothing would be left to differentiate
        can_detach = facts.get("fresh", True)
        recompute = Fix("recompute", f"Recompute `{name}` with a fresh forward before using it again", safe=False,
                        preferred=bumped or not can_detach, target=ff.get("use_span") or ev.span,
                        params=_p(mode="before_use", name=name))
        detach = Fix("detach", "Detach the carried tensor before using it again", safe=False,
                     preferred=not bumped and bool(can_detach),
                     target=ff.get("use_span") or ev.span, params=_p(mode="stale_use", name=name))
        fixes += [detach, recompute] if (can_detach and not bumped) else [recompute] + ([detach] if can_detach else [])
    elif code in ("GW403", "GW405") and facts.get("kept"):
        pass  # reported at the store that kept its source (``buffer.append(value)``): detaching
        # the stored value is the fix, and which argument that is the text must say: by hand
    elif code in ("GW403", "GW405"):
        untrained = bool(facts.get("untrained")) and facts.get("fresh", True)
        name = facts.get("name", "tensor")
        detach = Fix("detach", "Create it without a graph (`.detach()`): it is data for the loop",
                     safe=False, preferred=untrained, target=ff.get("node_span") or ev.span,
                     params=_p(mode="assignment", name=name))
        recompute = Fix("recompute", "Recompute it inside the loop", safe=False, preferred=not untrained,
                        target=ff.get("node_span") or ev.span, params=_p(mode="into_loop", name=name))
        fixes += [detach, recompute] if untrained else [recompute] + ([detach] if facts.get("fresh", True) else [])
        # the whole forward built before the loop (`logits = x @ W; ...; loss = ...`): what is
        # computed from it moves into the loop too (tried last: a value the loop only reads is
        # better detached)
        fixes.append(Fix("recompute", "Recompute it, and what is computed from it, inside the loop", safe=False,
                         target=ff.get("node_span") or ev.span, params=_p(mode="into_loop_chain", name=name)))
    elif code == "GW404":
        fixes.append(Fix("detach", "Accumulate `.detach()`ed values (the total keeps no graph)", safe=False,
                         preferred=True, target=ev.span, params=_p(mode="running_total", name=facts.get("name"))))
    elif code in ("GW501", "GW502"):
        bw = _sp(ff.get("backward_span"))
        opt = facts.get("opt", "")
        if code == "GW501":
            # (a fused step raises nothing: the later backward meant the old weights, which a
            # fresh forward after the step would not give)
            fixes.append(Fix("recompute", "Recompute the later loss after the step (fresh forward through the "
                                          "updated model)", safe=False, preferred=True, target=ev.span,
                             params=_p(mode="after_step", opt=opt, backward_span=bw)))
        fixes.append(Fix("detach", "Detach what the later loss takes from the stepped model", safe=False,
                         target=ev.span, params=_p(mode="later_loss", opt=opt, backward_span=bw)))
        # a fused step gives no error to avoid: the backward meant the old weights, so the step
        # belongs after it (a fresh forward would change what is trained)
        fixes.append(Fix("move_step", "Call step() after the later backward", safe=False, target=ev.span,
                         preferred=code == "GW502", params=_p(opt=opt, backward_span=bw,
                                   backward_row=ff.get("backward_span").row if ff.get("backward_span") else "")))
    elif code == "GW504" and ff.get("value_span") is not None:
        fixes.append(Fix("detach", "Detach the other model's output where it feeds this loss", safe=False,
                         preferred=True, target=ff["value_span"], params=_p(mode="value")))
    elif code in ("GW503", "GW504"):
        fixes.append(Fix("detach", "Detach the other model's output where it feeds this loss", safe=False,
                         preferred=True, target=ev.span, params=_p(mode="call_arg", name=facts.get("name"))))
    elif code == "GW602":
        fixes.append(Fix("reveal_write", "Write the tensor itself, so autograd records the write", safe=False,
                         preferred=True, target=ev.span))
    elif code == "GW506" and ff.get("operand"):
        fixes.append(Fix("detach", f"Detach `{ff['operand']}` in the policy term (`.detach()`)", safe=False,
                         preferred=True, target=ev.span, params=_p(mode="operand", name=ff["operand"])))
    elif code in ("GW506", "GW507"):
        what = "the weight" if code == "GW506" else "the target distribution"
        fixes.append(Fix("detach", f"Detach {what} (`.detach()`)", safe=False, preferred=True, target=ev.span,
                         params=_p(mode="value")))
    elif code == "GW505":
        fixes.append(Fix("detach", f"Detach the target (`{facts.get('name', 'target')} = (...).detach()`)",
                         safe=False, preferred=True, target=ev.span, params=_p(mode="value")))
    elif code == "GW601":
        bw = next((r.span for r in ev.related if r.kind == "backward"), None)
        fixes.append(Fix("clone", "Write to a copy (`.detach().clone()`) instead of through `.data`",
                         safe=False, preferred=True, target=ev.span, params=_p(mode="data")))
        fixes.append(Fix("move_step", "Do the update after the backward that needs the old values", safe=False,
                         target=ev.span, params=_p(backward_span=_sp(bw))))
    return fixes


def _receiver_is_module(op: str) -> bool:
    """`F.relu(x, inplace=True)` / `torch.add(a, b, out=x)`: the engine's target text is the
    function's module, not the written tensor."""
    return "(inplace=" in op or "(out=" in op


def _saved_name(ev: Event) -> str:
    for r in ev.related:
        if r.kind == "save":
            m = re.search(r"saves `([^`]+)`", r.message)
            if m:
                return m.group(1)
    return ""


def _clone_line(ff: Dict[str, Any], src: SourceText, target: str) -> Tuple[Edit, ...]:
    span = ff.get("stmt_span")
    if span is None or not _is_name(target):
        return ()
    line = src.line(span.row)
    if line[: span.column - 1].strip():
        return ()
    return (Edit(Span(span.row, 1, span.row, 1), f"{_indent(src, span.row)}{target} = {target}.clone()\n"),)
