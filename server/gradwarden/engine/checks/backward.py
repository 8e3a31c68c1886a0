"""Backward: the nodes a backward runs and frees, and the checks PyTorch makes when it runs a node
(a freed graph, a saved tensor modified since it was saved), plus what it cannot see (writes
through ``.data``, gradients accumulated over iterations, custom backward bodies).
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.flowfacts import other_file
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    Backward, ConstV, Node, Saved, SeqV, State, TensorV, Value, Write, tensor_value, walk_nodes,
)


def _provably_saves(n: Node) -> bool:
    """Does ``n`` hold something a backward frees, whatever its inputs of unknown origin are?
    A node whose every save is conditional (``Saved.maybe``: recorded only if an argument nobody
    in view passes requires grad — ``storage.returns() * 2`` in a method analysed alone) may not
    exist when the code runs: a second backward through it proves nothing."""
    return n.custom is not None or n.holds or any(not s.maybe for s in n.saved)

def first_keep(st: State, tid: Optional[int], limit: int = 8) -> Optional[Span]:
    """The first store onto an object (``held_at``) of a graph-carrying tensor that ``tid``
    was computed from (through tensors kept on an object, or a chain of temporaries): where a
    graph kept across calls first entered the object's state. None when none was kept."""
    found: Optional[Span] = None
    seen: Set[int] = set()
    while tid is not None and tid not in seen and limit > 0:
        seen.add(tid)
        limit -= 1
        info = st.t.get(tid)
        node = info.grad_fn if info is not None else None
        if node is None:
            break
        nxt = None
        graphed = []
        for p, t in zip(node.inputs, node.input_tids):
            ti = st.t.get(t)
            if ti is None or ti.grad_fn is not p:
                continue
            graphed.append(t)
            if ti.held_at is not None and nxt is None:
                nxt = t
                found = ti.held_at
        # through a temporary only along a chain (one input with a graph), never into a
        # computation that joins several graphs
        tid = nxt if nxt is not None else (graphed[0] if len(graphed) == 1 else None)
    return found



def _recomputed(st: State, save_seq: int, write_seq: int) -> bool:
    """The save and the write both happened inside one ``checkpoint(..., use_reentrant=False)`` call
    (``domain/torchsem.checkpointed`` records the span of each such call)."""
    return any(lo < save_seq <= hi and lo < write_seq <= hi for lo, hi in st.meta.get("recomputed", ()))

class BackwardPass:
    """The ``backward`` role: backward passes and their checks."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.accumulations: Dict[Tuple[int, int], Dict[str, Any]] = {}
        self.implicit_objective = True  # what implicit_backward runs the backward of: an objective?
        # custom Function nodes whose backward reads an intermediate of forward: (fn, where kept)
        self.custom_middles: Dict[int, Tuple[str, Span]] = {}
        # hazards that only matter if a backward runs through a node: node id -> the event
        self.watched: Dict[int, Event] = {}
        # gradient nodes of create_graph=True backwards through such a node
        self.incomplete_grads: Dict[int, Tuple[str, Span, Span]] = {}

    # ------------------------------------------------------------------ backward
    def do_backward(self, st: State, roots: Sequence[Value], span: Span, *, retain: bool, accumulate: bool = True,
                    implicit: bool = False, inputs: Sequence[Value] = (), user_grad: bool = False) -> List[Node]:
        """Run a backward from ``roots``; returns the nodes it ran (latest first)."""
        root_nodes: List[Node] = []
        root_names: List[str] = []
        for r in roots:
            for t in self.it.graph.slot_tensors(st, r):
                info = st.t.get(t.tid)
                if info is not None and info.grad_fn is not None and all(n is not info.grad_fn for n in root_nodes):
                    root_nodes.append(info.grad_fn)
                    root_names.append(info.name)
        if not root_nodes:
            return []
        bseq = st.next_seq()
        visited: Dict[int, Node] = {}
        parent: Dict[int, Node] = {}
        consumers: Dict[int, List[Node]] = {}
        stack = list(root_nodes)
        while stack:
            n = stack.pop()
            if n.id in visited:
                continue
            visited[n.id] = n
            for p in n.inputs:
                consumers.setdefault(p.id, []).append(n)
                if p.id not in parent and p.id not in visited:
                    parent[p.id] = n
                stack.append(p)
        order = sorted(visited.values(), key=lambda n: -n.seq)
        if inputs:
            # autograd.grad(loss, inputs) / backward(inputs=...): only the nodes on a path to the
            # inputs run (and are freed); the rest of the graph stays as it was
            order = self.nodes_towards(st, order, inputs)
        self.on_backward(st, order, span, implicit)
        backward_desc = "any later backward through the result" if implicit else f"the backward at line {span.row}"
        for n in order:
            if n.id in st.freed and _provably_saves(n) and not implicit:
                use, via = parent.get(n.id), n
                while use is not None and use.id in st.freed:
                    use, via = parent.get(use.id), use  # the first node of the new graph on the way to n
                stale = ""
                if use is not None:
                    for p, nm in zip(use.inputs, use.input_names):
                        if p is via:
                            stale = nm
                self.freed_graph_event(st, n, use, order, span, root_names, stale)
                self.on_raising_backward(st, order)
                raise Halt()
            for s in n.saved:
                cur = st.version(s.counter)
                if s.unchecked:
                    if cur > s.version:
                        culprit = self.first_write_after(st, s)
                        if culprit is not None:
                            self.unchecked_event(st, n, s, culprit, span, backward_desc)
                    continue
                if cur > s.version:
                    culprit = self.first_write_after(st, s)
                    if culprit is not None:
                        self.version_event(st, n, s, culprit, span, backward_desc)
                    if not implicit:
                        self.on_raising_backward(st, order)
                        raise Halt()
                for w in st.data_writes.get(s.storage, ()):
                    if w.seq > s.seq and (w.kind != "data_assign" or w.tid == s.tid and not s.view):
                        self.data_write_event(st, n, s, w, span, backward_desc)
            if n.custom is not None:
                danger = self.grad_output_danger(n, consumers.get(n.id, []), n in root_nodes and user_grad)
                self.analyse_custom_backward(st, n, span, danger)
        if implicit:
            return order
        self.it.writes.hidden_write_events(st, order, span)
        for n in order:
            ev = self.watched.get(n.id)
            if ev is None:
                continue
            ev = Event(ev.kind, ev.span, dict(ev.facts, backward_line=span.row),
                       ev.related + (Related(span, "the backward that trains through it", "backward"),))
            if "target_node" in ev.facts:
                where = self.it.writes.detach_point(ev.facts["target_node"], set(ev.facts["theirs"]), consumers)
                if where is not None:
                    ev = Event(ev.kind, where, ev.facts, ev.related, fix_facts={"node_span": where})
            elif "weight_node" in ev.facts:
                where, ff = self.it.writes.policy_site(ev, consumers)
                ev = Event(ev.kind, where, ev.facts, ev.related, fix_facts=ff)
            if ev.kind == "peer_target_not_detached":
                # wrong only where the peer's gradients are used: asked for here
                # (autograd.grad(loss, peer_params)), or applied by an optimizer step before a
                # zero_grad clears them (reported by that step)
                wanted = {t.tid for v in inputs for t in self.it.graph.slot_tensors(st, v)}
                if wanted & set(ev.facts.get("theirs", ())):
                    self.it.emit(Event(ev.kind, ev.span, dict(ev.facts, step="autograd.grad", step_line=span.row),
                                       ev.related))
                    continue
                meta = st.own("meta")
                hits = dict(meta.get("peer_hits", {}))
                hits[bseq] = hits.get(bseq, ()) + (ev,)
                meta["peer_hits"] = hits
            else:
                self.it.emit(ev)
        for n in order:
            if n.id in self.incomplete_grads:
                fn, kept, grad_span = self.incomplete_grads[n.id]
                self.it.emit(Event("double_backward_constant", kept, {"fn": fn, "grad_line": grad_span.row,
                                                                      "backward_line": span.row},
                                   (Related(grad_span, "create_graph=True differentiates through it here", "call"),
                                 Related(span, "this backward uses that incomplete gradient", "backward"))))
        if st.loop_ctx:
            self.check_stale_retained(st, order, span)
        if self.accumulations:
            root_tids = {t.tid for r in roots for t in self.it.graph.slot_tensors(st, r)}
            for rec in self.accumulations.values():
                if rec["tids"] & root_tids:
                    rec["backwarded"] = True  # the running total is itself a loss: not a leak
        if not retain:
            freed = st.own("freed")
            b = Backward(span, bseq, retain, tuple(root_nodes))
            for n in order:
                freed.setdefault(n.id, b)
        if accumulate:
            leaves: Set[int] = set()
            for n in order:
                leaves.update(n.leaves)
            if leaves:
                grads = st.own("grads")
                rec = (span, bseq, tuple(root_nodes))
                for tid in leaves:
                    grads[tid] = grads.get(tid, ()) + (rec,)
                none = st.meta.get("none_grads")
                if none:
                    st.own("meta")["none_grads"] = frozenset(none) - leaves
        meta = st.own("meta")
        meta["backwards"] = meta.get("backwards", ()) + ((span, bseq, retain),)
        return order

    def gradient_graph(self, st: State, ran: Sequence[Node], span: Span) -> Optional[Node]:
        """The node behind gradients computed with ``create_graph=True``: the backward formulas
        read the tensors the nodes it ran saved, so the gradient's history goes through those
        tensors' histories (a ReLU's output, a Linear's weight), not through every input."""
        parents: List[TensorV] = []
        seen: Set[int] = set()
        for n in ran:
            for s in n.saved:
                if s.tid in st.t and s.tid not in seen:
                    seen.add(s.tid)
                    parents.append(tensor_value(s.tid))
        if not parents:
            return None
        node = self.it.graph.make_node(st, "grad", span, parents, (), st.next_seq())
        middle = next((self.custom_middles[n.id] for n in ran if n.id in self.custom_middles), None)
        if middle is not None:
            self.incomplete_grads[node.id] = (middle[0], middle[1], span)
        return node

    def nodes_towards(self, st: State, order: List[Node], inputs: Sequence[Value]) -> List[Node]:
        """The nodes of ``order`` (latest first) that a backward restricted to ``inputs`` runs:
        those from which a leaf input, or the node that produced a non-leaf input, is reachable
        (that producing node itself does not run). Unknown inputs: every node."""
        leaf_tids: Set[int] = set()
        stops: Set[int] = set()
        for v in inputs:
            ts = self.it.graph.slot_tensors(st, v)
            if not ts:
                return order
            for t in ts:
                info = st.t.get(t.tid)
                if info is None:
                    return order
                if info.grad_fn is not None:
                    stops.add(info.grad_fn.id)
                elif info.rg:
                    leaf_tids.add(self.it.graph.leaf_root(st, t.tid))
                    leaf_tids.add(t.tid)
        needed: Dict[int, bool] = {}
        for n in sorted(order, key=lambda n: n.seq):  # inputs before the nodes that use them
            needed[n.id] = n.id not in stops and (bool(leaf_tids & set(n.leaves)) or any(
                p.id in stops or needed.get(p.id, False) for p in n.inputs))
        return [n for n in order if needed[n.id]]

    def on_backward(self, st: State, order: Sequence[Node], span: Span, implicit: bool) -> None:
        """Hook for the hover recorder (engine/explain/recorder.py); nothing to do in a plain run."""

    def on_raising_backward(self, st: State, order: Sequence[Node]) -> None:
        """A backward that raises (reported): the flow layer notes what it would have reached."""

    def implicit_backward(self, ret: Value, st: State, span: Span, user_grad: bool = False) -> None:
        tensors: List[TensorV] = []
        if isinstance(ret, TensorV):
            tensors = [ret]
        elif isinstance(ret, SeqV):
            tensors = [x for x in st.lists.get(ret.lid, ()) if isinstance(x, TensorV)]
        if not tensors:
            return
        # A save made only if the inputs of a function analysed on its own require grad is
        # reported (information) where the function computes an objective - a loss, a metric,
        # a log-probability: what gets differentiated. A function that returns a transformed
        # tensor (an image, boxes, coordinates, a schedule, an optimizer's update) is often
        # never differentiated, and the note there was mostly noise (benchmarks/PRECISION.md).
        saved_flag = self.implicit_objective
        self.implicit_objective = user_grad or any(_is_objective(st, t) for t in tensors)
        try:
            self.do_backward(st, tensors, span, retain=True, accumulate=False, implicit=True, user_grad=user_grad)
        except Halt:
            pass
        finally:
            self.implicit_objective = saved_flag

    def first_write_after(self, st: State, s: Saved) -> Optional[Write]:
        best = None
        for w in st.writes.get(s.counter, ()):
            if w.version_after > s.version and w.seq > s.seq and (best is None or w.seq < best.seq):
                best = w
        if best is None:
            for w in st.writes.get(s.counter, ()):
                if w.version_after > s.version and (best is None or w.seq < best.seq):
                    best = w
        return best

    # ------------------------------------------------------------------ events
    def _save_related(self, n: Node, s: Saved) -> Related:
        where = n.call_span or n.report_span or n.span
        what = f"`{s.name or n.label}`" if (s.name or n.label) else "its output" if s.is_output else "a tensor"
        return Related(where, f"`{n.op}` saves {what} for backward here (version {s.version})", "save")

    def version_event(self, st: State, n: Node, s: Saved, w: Write, span: Span, backward_desc: str) -> None:
        if w.kind == "ctx_saved":
            return  # reported by the backward-body rule at the write itself
        related = [self._save_related(n, s)]
        if w.site is not None and w.site != w.span:
            related.append(Related(w.span, "the module runs (and writes) here", "call"))
        implicit = backward_desc.startswith("any")
        recomputed = _recomputed(st, n.seq, w.seq)
        related.append(Related(span, "a backward through what this returns would fail" if implicit
                               else "backward uses the written values here" if recomputed
                               else "backward fails here", "backward"))
        timeline = self.timeline(st, s, n, w, span)
        if s.maybe and implicit and not self.implicit_objective:
            return  # (see implicit_backward)
        where = w.site or w.span
        if w.kind == "step":
            depth = len(self.it.call_spans)
            where = w.stack[depth] if len(w.stack) > depth else w.span  # a wrapper's step(): its call
        facts = {"op": w.op, "name": w.name, "saver": n.op, "save_line": _line_named(n, where, self.it.filename),
                 "version": s.version, "backward_line": span.row, "outcome": "will raise", "assumes_backward": implicit,
                 "backward": _named(backward_desc, span, where, self.it.filename),
                 "cond": " (if its inputs require grad: we cannot tell here)" if s.maybe else ""}
        severity = 3 if s.maybe else None  # information: not provable from this code alone
        if recomputed:
            # save and write inside one non-reentrant checkpoint: nothing raises, the gradients are wrong
            facts["outcome"] = ("does not raise under `checkpoint(use_reentrant=False)`, which recomputes the saved "
                                "value and writes it again: the gradients are silently computed from the written values")
            severity = 3 if s.maybe else 2
        if w.kind == "step":
            params = f"`{s.name}`" if s.name else "its parameters"
            facts.update(opt=w.optimizer or "optimizer", params=params, step=w.op)
            if where != w.span:
                related.append(Related(w.span, "the parameters are written here", "write"))
            self.it.emit(Event("step_before_backward", where, facts, tuple(related), timeline,
                               fix_facts={"backward_span": span, "write": w}, severity=severity))
            return
        self.it.emit(Event("version_mismatch", where, facts, tuple(related), timeline,
                           fix_facts=dict(st.meta.get(("fix", w.seq), {}), write=w), severity=severity))

    def unchecked_event(self, st: State, n: Node, s: Saved, w: Write, span: Span, backward_desc: str) -> None:
        fn = n.custom[0].name if n.custom else n.op
        self.it.emit(Event("ctx_stash_modified", w.site or w.span,
                           {"op": w.op, "name": w.name, "fn": fn,
                            "backward": _named(backward_desc, span, w.site or w.span, self.it.filename),
                            "assumes_backward": backward_desc.startswith("any")},
                           (self._save_related(n, s), Related(span, "backward silently uses the modified values here",
                                                          "backward"))))

    def data_write_event(self, st: State, n: Node, s: Saved, w: Write, span: Span, backward_desc: str) -> None:
        related = (self._save_related(n, s), Related(span, "backward silently uses the modified values here",
                                                     "backward"))
        facts = {"op": w.op, "name": w.name, "saver": n.op, "save_line": _line_named(n, w.site or w.span, self.it.filename),
                 "version": s.version, "backward_line": span.row, "assumes_backward": backward_desc.startswith("any"),
                 "backward": _named(backward_desc, span, w.site or w.span, self.it.filename),
                 "cond": " (if its inputs require grad)" if s.maybe else "",
                 "how": "replacing its `.data`" if w.kind == "data_assign" else f"in-place {w.op} through `.data`"}
        if w.kind == "fused_step":
            facts.update(opt=w.optimizer or "optimizer", params=f"`{s.name}`" if s.name else "its parameters",
                         step=w.op)
            self.it.emit(Event("fused_step", w.span, facts, related))
            return
        self.it.emit(Event("data_write", w.site or w.span, facts, related, fix_facts={"write": w},
                           severity=3 if s.maybe else None))

    def timeline(self, st: State, s: Saved, n: Node, w: Write, span: Span) -> Tuple[Related, ...]:
        items: List[Related] = []
        info = st.t.get(s.tid)
        if info is not None and info.created is not None:
            items.append(Related(info.created, f"`{s.name or 'tensor'}` created (version 0)", "created"))
        items.append(Related(n.report_span or n.span, f"saved by `{n.op}` at version {s.version}", "save"))
        for x in st.writes.get(s.counter, ()):
            items.append(Related(x.site or x.span, f"`{x.op}` bumps the version to {x.version_after}", "write"))
        items.append(Related(span, f"backward expects version {s.version}, finds version {st.version(s.counter)}",
                             "backward"))
        items.sort(key=lambda r: (r.span.row, r.span.column))
        return tuple(items)

    def freed_graph_event(self, st: State, n: Node, use: Optional[Node], order: Sequence[Node], span: Span,
                          root_names: Sequence[str], stale: str = "") -> None:
        first: Backward = st.freed[n.id]
        freed_here = [m for m in order if m.id in st.freed]
        bumped = False
        for m in freed_here:
            for s in m.saved:
                for w in st.writes.get(s.counter, ()):
                    if w.seq > first.seq:
                        bumped = True
        # parameters under the freed graph updated in place since (an optimizer step, SAM's
        # first_step): retain_graph would only trade the error for a stale forward
        stepped = any(self.leaf_update_after(st, m, since=first.seq) is not None for m in freed_here)
        node_iters = dict(n.loop_ctx)
        via = n
        if use is not None:
            via = next((p for p in use.inputs if self._reaches(p, n)), n)
        # built before the loop we are in (a forward computed once), or in an earlier iteration of it
        carried = False
        across = False
        for lid, k in st.loop_ctx:
            if lid not in node_iters:
                carried = True
                break
            if node_iters[lid] < k:
                across = True
                break
        # the loop runs a forward of its own (new nodes that train leaves) on top of the carried
        # graph: that graph is an input built once by mistake, not one forward backwarded per item
        loops = {lid for lid, _ in st.loop_ctx}
        fresh_forward = carried and any(m.leaves and m.id not in st.freed and loops <= {lid for lid, _ in m.loop_ctx}
                                        for m in order)
        # would the backward still train something with the carried part cut (a detach)? only
        # then is `.detach()` a fix; otherwise the value must be recomputed
        current = dict(st.loop_ctx)
        fresh = any(m.leaves and m.id not in st.freed and
                    not any(lid not in dict(m.loop_ctx) or dict(m.loop_ctx)[lid] < k for lid, k in current.items())
                    for m in order)
        untrained = self.untrained_leaves(st, n)
        name = stale or n.label or (use.label if use is not None else "")
        again = first.span.row == span.row
        facts = {"built": f"`{name or 'tensor'}` is built here once",
                 "freed_line": first.span.row, "backward_line": span.row, "root": next((r for r in root_names if r), "loss"),
                 "freed": f"the backward at line {first.span.row}" + (" (in the previous iteration)" if again else ""),
                 "later": "the next iteration's backward" if again else f"the backward at line {span.row}",
                 "name": name or "tensor", "op": n.op, "bumped": bumped or stepped, "carried": carried,
                 "untrained": untrained, "has_use": use is not None, "fresh": fresh}
        related = [Related(first.span, "the first backward frees this graph here", "freed"),
                   Related(n.report_span or n.span, f"`{n.op}` saved tensors here, freed since", "save"),
                   Related(span, "the second backward fails here", "backward")]
        if self.freed_by_other_model(st, n, first, facts, related):
            pass  # another optimizer's loss freed it, reaching this model through a missing detach
        elif carried and (bumped or untrained or fresh_forward):
            # where the carried graph attaches to trainable leaves: the forward computed once
            origin = self.attach_node(st, n, node_iters_of=st.loop_ctx)
            where = origin.span
            depth = self.it.loop_depth.get(next((lid for lid, _ in st.loop_ctx if lid not in dict(origin.loop_ctx)), -1), 0)
            owned = {t for params in st.meta.get("optimizers", {}).values() for t in params}
            if len(origin.stack) > depth and self.it.graph.leaves_under(origin) & owned:
                # a trained model's forward run once: the call, in the loop's own function, that
                # built it (recompute it in the loop)
                where = origin.stack[depth]
            elif len(origin.stack) > depth:
                # an untrained one is data: detach it where it is made, or at the call of the
                # model that makes it (never inside a model's forward)
                where = self.it.graph.user_call_site(origin, set(), start=depth)
            stale_tid = next((t for p, t in zip(use.inputs, use.input_tids) if p is via), None) \
                if use is not None else None
            held = st.t[stale_tid].held_at if stale_tid in st.t else None
            elsewhere = origin.stack[:depth] != tuple(self.it.call_spans)[:depth]
            if held is None and elsewhere:
                # the forward ran outside the loop's call (a rollout kept in a buffer, stacked by
                # a method of it): the graph entered the object at its first store
                held = first_keep(st, stale_tid)
            if held is not None and held.row != where.row and (len(origin.stack) > depth or elsewhere):
                where = held  # kept on an object by the code that built it (``self.bias = table[idx]``)
                facts["built"] = f"`{facts['name']}` is kept here"  # a store (a replay memory's push), not where it is built
                # computed from tensors kept on an object before (a rollout buffer's
                # ``self.values.append(value)``, stacked later): the graph entered the object there
                kept = first_keep(st, stale_tid)
                if kept is not None:
                    where = kept
                    facts["kept"] = True
                    facts["built"] = f"`{facts['name']}` is computed once from a tensor kept here"
            self.it.emit(Event("graph_carried", where, facts, tuple(related), fix_facts={"node_span": where}))
        elif across and use is not None:
            # carried over from the previous iteration: report where it was stored for the next one
            stale_tid = next((t for p, t in zip(use.inputs, use.input_tids) if p is via), None)
            crossing = self.iteration_crossing(st, order, n)
            if crossing is not None and crossing[0] is not use:
                # ``use`` itself belongs to an earlier iteration (``lam = lam + lr * violation``
                # mixed the freed graph into ``lam``): what crosses into this iteration is the
                # value the current graph takes from it
                use, stale_tid = crossing
                if stale_tid in st.t and st.t[stale_tid].name:
                    facts["name"] = st.t[stale_tid].name
            info = st.t.get(stale_tid) if stale_tid is not None else None
            stored = (self.it.passed_through.get(stale_tid) or info.held_at or info.stored_at) \
                if info is not None else None
            uspan = stored or use.stale_site or use.report_span or use.span
            if stored is not None:
                # what reads the old value back also reads this iteration's one, kept at the
                # same place (a loss history stacked for backward): a detach at the store would
                # cut the new value's path too
                for tid in use.input_tids:
                    t = st.t.get(tid)
                    if tid != stale_tid and t is not None and stored in (t.held_at, t.stored_at):
                        facts["fresh"] = False
            self.it.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif bumped and use is not None:
            uspan = self.use_site(use)
            self.it.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif self.it.writes.policy_weight_frees(st, n, first, facts, related):
            pass
        elif stepped and use is not None:
            uspan = self.use_site(use)
            self.it.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif bumped or stepped:
            # the same loss backwarded again after the update: only a fresh forward is right
            facts["name"] = next((r for r in root_names if r), facts["name"])
            self.it.emit(Event("stale_use", span, facts, tuple(related), fix_facts={"use_span": span}))
        else:
            self.it.emit(Event("backward_frees", first.span, facts, tuple(related),
                               fix_facts={"backward_span": first.span}))

    def use_site(self, use: Node) -> Span:
        """Where a freed graph's value enters the new graph: the call that passed it in, unless
        that call is one the failing backward runs under (a helper handed the value runs the
        network on it and backwards it: the fix is at its use there, ``netD(fake.detach())``)."""
        if use.stale_site is not None and use.stale_site not in self.it.call_spans:
            return use.stale_site
        return self.it.graph.site_here(use.stack, use.span) if use.stale_site else use.report_span or use.span

    def check_stale_retained(self, st: State, order: Sequence[Node], span: Span) -> None:
        """GW405: this backward runs (again) through a retained graph recorded before the loop
        or in an earlier iteration, whose trainable leaves have been updated in place since
        (an optimizer step): nothing raises when the node did not save them, but the gradients
        come from the stale forward."""
        current = dict(st.loop_ctx)
        for m in order:
            if not m.leaves:
                continue
            its = dict(m.loop_ctx)
            before = any(lid not in its for lid in current)
            earlier = any(lid in its and its[lid] < k for lid, k in current.items())
            if not (before or earlier):
                continue
            w = self.leaf_update_after(st, m)
            if w is None:
                continue
            loop = next((lid for lid in current if lid not in its), None)
            depth = self.it.loop_depth.get(loop, 0) if loop is not None else len(self.it.call_spans)
            where = m.stack[depth] if len(m.stack) > depth else m.span
            if earlier and not before:
                crossing = self.iteration_crossing(st, order, m)
                info = st.t.get(crossing[1]) if crossing is not None else None
                if info is not None and (info.held_at or info.stored_at):
                    where = info.held_at or info.stored_at
            name = m.label or "tensor"
            self.it.emit(Event("stale_retained", where, {
                "name": name, "write": w.op, "write_line": w.span.row, "backward_line": span.row,
                "param": w.name or "a parameter"},
                (Related(w.span, f"`{w.op}` updates `{w.name or 'a parameter'}` in place here", "write"),
                 Related(span, "this backward reuses the graph recorded before the update", "backward")),
                fix_facts={"node_span": where}))
            return

    def leaf_update_after(self, st: State, m: Node, since: int = 0) -> Optional[Write]:
        """An in-place update (optimizer step, user write) of one of ``m``'s leaves after ``m``
        was recorded (and after ``since``), if any."""
        for tid in m.leaves:
            info = st.t.get(tid)
            if info is None:
                continue
            for w in st.writes.get(info.counter, ()):
                if w.seq > max(m.seq, since) and w.kind in ("step", "user"):
                    return w
        return None

    def attach_node(self, st: State, n: Node, node_iters_of: Any) -> Node:
        """Among the freed nodes built before the current loop, from ``n`` down: the latest one
        that takes trainable leaves (a parameter) as input, else ``n``."""
        loops = {lid for lid, _ in node_iters_of}
        best: Optional[Node] = None
        seen: Set[int] = set()
        stack = [n]
        while stack:
            m = stack.pop()
            if m.id in seen or m.id not in st.freed:
                continue
            seen.add(m.id)
            if loops and loops <= {lid for lid, _ in m.loop_ctx}:
                continue  # built inside the loop: not the carried part
            if m.leaves and (best is None or m.seq > best.seq):
                best = m
            stack.extend(m.inputs)
        return best or n

    def freed_by_other_model(self, st: State, n: Node, first: Backward, facts: Dict[str, Any],
                             related: List[Related]) -> bool:
        """GW504: the backward that freed ``n`` was another optimizer's (it stepped right after),
        and reached this model only because that model's output entered the other's loss without
        ``.detach()``: point at where it entered."""
        opts: Dict[int, Tuple[int, ...]] = st.meta.get("optimizers", {})
        mine = self.it.graph.leaves_under(n)
        if not mine or not first.roots:
            return False
        if not any(mine & set(params) for params in opts.values()):
            return False  # this graph's own model is trained by no optimizer: not a second model
        for oid, params in opts.items():
            theirs = set(params)
            if theirs & mine:
                continue
            stepped = any(o == oid and seq > first.seq for o, seq, _ in st.meta.get("steps", ()))
            if not stepped:
                continue
            merge = self.it.optim.merge_node(first.roots, mine, theirs)
            if merge is None:
                continue
            facts = dict(facts, freed_line=first.span.row)
            carried = self.it.graph.carried_tids(merge, mine)
            where = self.it.graph.user_call_site(merge, carried)
            # what to detach there: the argument that hands the value over (by its name), or the
            # expression that makes it on that line
            ff: Dict[str, Any] = {"use_span": where}
            arg = self.it.graph.handed_over(merge, carried, where)
            if arg is not None and arg in st.t:
                info = st.t[arg]
                if info.created is not None and where.row <= info.created.row <= where.end_row and \
                        info.created.file == where.file:
                    ff["value_span"] = info.created
                elif info.name:
                    facts = dict(facts, name=info.name)
            self.it.emit(Event("missing_detach_frees", where, facts, tuple(related), fix_facts=ff))
            return True
        return False

    def iteration_crossing(self, st: State, order: Sequence[Node], n: Node) -> Optional[Tuple[Node, int]]:
        """The node of the current iteration that takes, as input, a tensor built in an earlier
        iteration whose graph reaches ``n``: (that node, the tensor's id)."""
        current = dict(st.loop_ctx)
        if not current:
            return None

        def earlier(m: Node) -> bool:
            its = dict(m.loop_ctx)
            return any(lid in its and its[lid] < k for lid, k in current.items())

        for m in order:
            if earlier(m):
                continue
            for p, t in zip(m.inputs, m.input_tids):
                if earlier(p) and (p is n or self._reaches(p, n)):
                    return m, t
        return None

    @staticmethod
    def _reaches(a: Node, b: Node) -> bool:
        return any(m is b for m in walk_nodes([a]))

    def untrained_leaves(self, st: State, n: Node) -> bool:
        """True when every leaf under ``n`` is a plain tensor nothing ever trains (an accidental graph)."""
        leaves = self.it.graph.leaves_under(n)
        if not leaves:
            return False
        owned = set()
        for params in st.meta.get("optimizers", {}).values():
            owned.update(params)
        for tid in leaves:
            info = st.t.get(tid)
            if info is None or info.param or tid in owned or st.writes.get(info.counter):
                return False
        return True

    def grad_output_danger(self, n: Node, consumers: Sequence[Node], user_grad: bool) -> str:
        """Why writing into this node's grad_output would hurt (empty: it would not).

        The incoming gradient is expanded after sum/mean/expand, is passed unchanged to both
        operands by add/sub, and is the caller's own tensor with ``grad_tensors=``."""
        if user_grad:
            return "the caller's grad_tensors"
        if len(consumers) != 1:
            return ""
        op = consumers[0].op
        if op in ("sum", "mean", "expand", "expand_as", "broadcast_to", "nansum"):
            return f"expanded by `{op}`'s backward"
        if op in ("add", "sub", "__radd__", "__rsub__"):
            return f"shared by `{op}`'s backward with the other operand"
        return ""

    def analyse_custom_backward(self, st: State, n: Node, span: Span, danger: str = "") -> None:
        """Run a custom Function's backward body when a backward reaches its node."""
        info, ctx, n_out = n.custom
        key = (n.id, span.row)
        if key in self.it.analysed_backward:
            return
        self.it.analysed_backward.add(key)
        found = info.find_method("backward")
        if not found:
            return
        fdef = found[1]
        grads = self.it.functions.grad_outputs(st, info, ctx, n_out, danger)
        saved_mode = st.grad_enabled
        st.grad_enabled = False
        st.set_attr(ctx.oid, "__in_backward__", ConstV(True))
        exits: List[Tuple[State, Value]] = []
        try:
            exits = self.it.calls.call_function(fdef, [ctx] + grads, {}, st, span, join=False)
            self.it.calls.join_exits(st, exits)
        except Exception as exc:  # a Halt inside a backward body is reported, not propagated
            if type(exc).__name__ not in ("Halt",):
                raise
        finally:
            st.grad_enabled = saved_mode
            st.set_attr(ctx.oid, "__in_backward__", ConstV(False))
        self.check_grads_for_non_tensors(info, fdef, ctx, exits, st)
        self.it.functions.check_grad_shapes(info, fdef, ctx, exits, st)

    def check_grads_for_non_tensors(self, info: Any, fdef: Any, ctx: Any, exits: Sequence[Any], st: State) -> None:
        """A gradient returned for a forward input that was not a tensor (a float, None, a
        flag): autograd raises ``returned a gradient different than None at position N, but
        the corresponding forward input was not a Variable``."""
        marker = st.attrs(ctx.oid).get("__non_tensor_inputs__")
        non_tensor = set(marker.value) if isinstance(marker, ConstV) else set()
        if not non_tensor:
            return
        bad = set()
        for ex_state, ret in exits:
            if isinstance(ret, SeqV):
                items = ex_state.lists.get(ret.lid, ())
                bad.update(i for i, v in enumerate(items) if i in non_tensor and isinstance(v, TensorV))
            elif isinstance(ret, TensorV) and 0 in non_tensor:
                bad.add(0)
        if not bad:
            return
        for node in _own_nodes(fdef):
            if not isinstance(node, ast.Return) or node.value is None:
                continue
            elts = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for i in sorted(bad):
                if i < len(elts) and not (isinstance(elts[i], ast.Constant) and elts[i].value is None):
                    self.it.emit(Event("grad_for_non_tensor", self.it.span_of(elts[i]),
                                       {"fn": info.name, "position": i + 1}))

    # ------------------------------------------------------------------ running totals (GW404)
    def note_accumulation(self, name: str, result: Value, rhs: Value, st: State, stmt: Any) -> None:
        if not st.loop_ctx or not isinstance(result, TensorV) or not isinstance(rhs, TensorV):
            return
        if st.t[rhs.tid].rg is not True:
            return
        key = (stmt.lineno, stmt.col_offset)
        rec = self.accumulations.setdefault(key, {"span": self.it.span_of(stmt), "name": name, "tids": set()})
        rec["tids"].add(result.tid)
        node = st.t[result.tid].grad_fn
        if node is not None:
            rec["made"] = min(rec.get("made", node.seq), node.seq)  # when the total first held a graph

    def finish_path(self, states: Sequence[State]) -> None:
        for key, rec in self.accumulations.items():
            if rec.get("done"):
                continue
            rec["done"] = True
            backwarded = False
            # The total keeps each iteration's graph alive only where something frees it
            # otherwise: a backward ran after the total was first made (the loop trains, or
            # backwards each term). Terms summed within one forward (`x += emb(x[:, i])`,
            # `loss += term`) make one graph that a later backward needs whole: nothing is kept
            # that would have been freed.
            trained = False
            for s in states:
                for tid in rec["tids"]:
                    info = s.t.get(tid)
                    if info is not None and info.grad_fn is not None and info.grad_fn.id in s.freed:
                        backwarded = True
                if not trained and "made" in rec:
                    trained = any(b.seq > rec["made"] for b in s.freed.values())
            if trained and not backwarded and not rec.get("backwarded"):
                self.it.emit(Event("running_total", rec["span"], {"name": rec["name"]}))


# Ops that reduce their input (losses among them): a value computed from their results only
# is an objective (a loss, a metric, a log-probability).
REDUCTIONS = frozenset({
    "sum", "mean", "nansum", "nanmean", "prod", "logsumexp", "norm", "linalg_norm", "vector_norm",
    "matrix_norm", "frobenius_norm", "nuclear_norm", "amax", "amin", "std", "var", "std_mean", "var_mean",
    "median", "nanmedian", "trace", "dot", "vdot", "inner", "count_nonzero", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
    "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "ctc_loss",
})
# Ops a value goes through and stays an objective: arithmetic, elementwise functions, views,
# dtype moves, in-place writes (``result -= c``, ``total[i] = loss``).
OBJECTIVE_KEEPERS = frozenset({
    "add", "sub", "mul", "div", "true_divide", "neg", "pow", "sqrt", "rsqrt", "exp", "log", "log1p", "log2",
    "log10", "abs", "clamp", "clamp_min", "clamp_max", "clip", "reciprocal", "square", "rsub", "maximum",
    "minimum", "where", "nan_to_num", "sigmoid", "tanh", "view", "reshape", "squeeze", "unsqueeze", "select",
    "flatten", "to", "float", "double", "half", "type_as", "contiguous", "clone", "stack", "cat", "setitem",
    "copy_", "fill_", "masked_fill", "masked_fill_", "__setitem__", "index_put_", "expand", "expand_as",
})


def _line_named(n: Node, where: Span, analysed: str) -> Any:
    """The line where ``n`` saved, as the finding's own file names it: its number, with its
    file when that is another (a layer in one module saving what a layer in another writes)."""
    at = n.call_span or n.report_span or n.span
    other = other_file(at, where, analysed)
    return at.row if other is None else f"{at.row} of {other}"


def _named(desc: str, backward: Span, where: Span, analysed: str) -> str:
    """The backward as the finding's own file names it: its line, and its file when that is
    another (a script's backward reaching a write in a helper module)."""
    other = None if desc.startswith("any") else other_file(backward, where, analysed)
    return desc if other is None else f"{desc} of {other}"


def _is_objective(st: State, t: TensorV, limit: int = 64) -> bool:
    """Is ``t`` computed from reductions only (through arithmetic, views and in-place
    writes)? A path that reaches an input of unknown origin (a function argument) without a
    reduction on the way, or an op of another kind (a convolution, an exponential map of the
    data), makes it a transformed tensor, not an objective."""
    info = st.t.get(t.tid)
    if info is None or info.grad_fn is None:
        return False
    todo, seen, found = [info.grad_fn], set(), False
    while todo:
        n = todo.pop()
        if n.id in seen:
            continue
        seen.add(n.id)
        if len(seen) > limit:
            return False
        op = n.op.rstrip("_") if n.op.endswith("_") and not n.op.endswith("__") else n.op
        if op in REDUCTIONS:
            found = True
            continue
        if op not in OBJECTIVE_KEEPERS and n.op not in OBJECTIVE_KEEPERS or n.opaque:
            return False
        todo.extend(n.inputs)
    return found
