"""The interpreter, recording what hover needs: which tensor each expression evaluated to,
what every backward checked. Used only by explain.explain_at (never on the lint path).

Recording is three roles played by other classes (engine/assembly.py): expressions and
statements note the tensors they see, backward passes note what they checked; all three write
into the ``recording`` role.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence, Tuple

from gradwarden.engine.assembly import new_interpreter
from gradwarden.engine.checks.flowlayers import FlowBackwardPass, FlowExpressions, FlowStatements
from gradwarden.engine.diagnostic import Span
from gradwarden.engine.explain.timeline import Timeline, TimelineEvent
from gradwarden.engine.front.source import SourceText
from gradwarden.engine.state.model import Node, State, TensorV, walk_nodes

_RECORDED = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)


class Recording:
    """The ``recording`` role: what the recording roles saw."""

    def __init__(self, it: Any) -> None:
        self.seen: List[Tuple[Span, int, int, State, bool]] = []  # span, tid, counter, state, standalone
        self.checks: List[Tuple[Span, int, int, int, str]] = []  # backward span, counter, saved v, found v, op
        self.states: List[State] = []


class RecordingExpressions(FlowExpressions):
    def eval(self, node, st):
        v = super().eval(node, st)
        if isinstance(v, TensorV) and isinstance(node, _RECORDED):
            info = st.t.get(v.tid)
            if info is not None:
                it = self.it
                it.recording.seen.append((it.span_of(node), v.tid, info.counter, st, it.standalone))
        return v


class RecordingStatements(FlowStatements):
    def exec_stmt(self, stmt, st):
        out = super().exec_stmt(stmt, st)
        if isinstance(stmt, ast.AugAssign):
            for s in out:
                self._see_target(stmt.target, s, self.it.span_of(stmt))
        elif isinstance(stmt, ast.Assign):
            for t in stmt.targets:
                for s in out:
                    self._see_target(t, s, self.it.span_of(t))
        return out

    def _see_target(self, target: ast.AST, st: State, span: Span) -> None:
        if isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name):
            v = st.lookup(target.id)
            if isinstance(v, TensorV) and v.tid in st.t:
                it = self.it
                it.recording.seen.append((span, v.tid, st.t[v.tid].counter, st, it.standalone))
                it.recording.seen.append((it.span_of(target), v.tid, st.t[v.tid].counter, st, it.standalone))


class RecordingBackwardPass(FlowBackwardPass):
    def on_backward(self, st: State, order: Sequence[Node], span: Span, implicit: bool) -> None:
        if implicit:
            return
        rec = self.it.recording
        rec.states.append(st)
        for n in order:
            for s in n.saved:
                rec.checks.append((span, s.counter, s.version, st.version(s.counter), n.op))

    def finish_path(self, states):
        self.it.recording.states.extend(states)
        super().finish_path(states)


RECORDING_ROLES = {"recording": Recording, "ev": RecordingExpressions, "stmts": RecordingStatements,
                   "backward": RecordingBackwardPass}


class RecordingInterpreter:
    """An interpreter of ``tree`` with the recording roles; what they saw: ``seen``, ``checks``,
    ``states`` (the hover table of the language server reads the same)."""

    def __init__(self, tree: ast.Module, src: SourceText, filename: str) -> None:
        self.interp = new_interpreter(tree, src, filename, roles=RECORDING_ROLES)
        rec = self.interp.recording
        self.seen, self.checks, self.states = rec.seen, rec.checks, rec.states

    def run(self) -> Any:
        return self.interp.run()


def explain(source: str, filename: str, row: int, column: int) -> Optional[Timeline]:
    try:
        tree = ast.parse(source, filename=filename)
    except (SyntaxError, ValueError, RecursionError):
        return None
    src = SourceText(source)
    interp = RecordingInterpreter(tree, src, filename)
    try:
        interp.run()
    except RecursionError:
        return None
    hits = [h for h in interp.seen if h[0].contains(row, column)]
    if not hits:
        return None
    # the innermost expression; prefer what the module's own run saw over lone analyses
    hits.sort(key=lambda h: (h[4], (h[0].end_row - h[0].row, h[0].end_column - h[0].column)))
    span, tid, counter, st, _ = hits[0]
    return _timeline(interp, src, span, tid, counter, st)


def _nodes_of(states: Sequence[State]) -> List[Node]:
    return walk_nodes([info.grad_fn for st in states for info in st.t.values() if info.grad_fn is not None])


def _timeline(interp: Any, src: SourceText, span: Span, tid: int, counter: int,
              st: State) -> Timeline:
    states = interp.states or [st]
    final = max(states, key=lambda s: s.seq)
    info = final.t.get(tid) or st.t[tid]
    events: List[TimelineEvent] = []
    creator = final.t.get(counter)
    if creator is not None and creator.created is not None:
        events.append(TimelineEvent(creator.created, "created", f"`{creator.name or 'tensor'}` created (version 0)", 0))
    for n in _nodes_of(states):
        for s in n.saved:
            if s.counter == counter:
                events.append(TimelineEvent(n.report_span or n.span, "save",
                                            f"`{n.op}` saves it for backward at version {s.version}", s.version))
    writes = {}
    for s in states:
        for w in s.writes.get(counter, ()):
            writes[id(w)] = w
    for w in sorted(writes.values(), key=lambda w: w.seq):
        kind = "step" if w.kind == "step" else "write"
        events.append(TimelineEvent(w.site or w.span, kind, f"{w.op} bumps the version to {w.version_after}",
                                    w.version_after))
    storage = info.storage
    for s in states:
        for w in s.data_writes.get(storage, ()):
            events.append(TimelineEvent(w.span, "data_write",
                                        f"{w.op} through `.data`: memory changes, version does not", None))
    seen_checks = set()
    for bspan, c, saved_v, found_v, op in interp.checks:
        if c != counter or (bspan.row, op, saved_v) in seen_checks:
            continue
        seen_checks.add((bspan.row, op, saved_v))
        verdict = "ok" if found_v == saved_v else f"finds version {found_v}: raises"
        events.append(TimelineEvent(bspan, "backward",
                                    f"backward checks `{op}`'s saved copy: expects version {saved_v}, {verdict}",
                                    found_v))
    uniq = {}
    for e in events:
        uniq.setdefault((e.span.row, e.span.column, e.kind, e.message), e)
    ordered = sorted(uniq.values(), key=lambda e: (e.span.row, e.span.column))
    note = ""
    if info.data_alias:
        note = "obtained through `.data`: shares memory but not the version counter"
    elif info.counter != tid and creator is not None:
        note = f"shares its version counter with `{creator.name or 'its base'}` (a view or a detach)"
    name = src.line(span.row)[span.column - 1: span.end_column - 1] if span.row == span.end_row else info.name
    return Timeline(name=name or info.name, span=span, events=tuple(ordered), requires_grad=info.rg,
                    is_leaf=info.grad_fn is None, note=note)
