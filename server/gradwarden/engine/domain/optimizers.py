"""Optimizers: what ``torch.optim`` optimizers hold (parameter groups) and what ``step()``
does (each parameter updated in place, checked against the graphs that saved it),
``zero_grad()``, user optimizers built on a torch base, and ``swa_utils.AveragedModel``.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.domain.schedules import LambdaSchedules
from gradwarden.engine.domain.zeroed import ZeroedGradients
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.domain.builtins import consume
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import (
    ConstV, DictV, FALSE, NONE, ObjV, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, Value, fresh_id, tensor_value,
    walk_nodes,
)


class Optimizers:
    """The ``optim`` role: optimizers."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.reported_cleared: set = set()  # GW740's zeroing calls already reported
        self.schedules = LambdaSchedules(it)  # LambdaLR factors at each step (GW741, domain/schedules.py)
        self.zeroed = ZeroedGradients(it)  # hooks and clips that zero gradients (GW742, GW743, domain/zeroed.py)

    # ================================================================== optimizers
    def construct_optimizer(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        lost: List[Tuple[Any, List[int]]] = []
        tids = self.collect_params(params, st, at=self.it.span_of(node), lost=lost)
        obj = ObjV(fresh_id())
        if lost:
            # a one-shot iterator an earlier consumer emptied: torch gets nothing from it
            # (engine/checks/reach.py reports it when the loss reaches what it held)
            meta = st.own("meta")
            meta["exhausted"] = {**meta.get("exhausted", {}), obj.oid: tuple((rec, tuple(t)) for rec, t in lost)}
        fused = kwargs.get("fused")
        st.set_attr(obj.oid, "__optim__", ConstV(qual))
        st.set_attr(obj.oid, "__params__", ConstV(tuple(tids)))
        st.set_attr(obj.oid, "__fused__", ConstV(isinstance(fused, ConstV) and fused.value is True))
        group = DictV(fresh_id())
        st.own("dicts")[group.did] = ((("c", "params"), self.it.ev.new_seq([tensor_value(t) for t in tids], st)),)
        st.set_attr(obj.oid, "param_groups", self.it.ev.new_seq([group], st))
        st.set_attr(obj.oid, "state", DictV(fresh_id()))
        meta = st.own("meta")
        opts = dict(meta.get("optimizers", {}))
        opts[obj.oid] = tuple(tids)
        meta["optimizers"] = opts
        return obj

    def collect_params(self, v: Value, st: State, depth: int = 0, at: Any = None,
                       lost: Optional[List[Tuple[Any, List[int]]]] = None) -> List[int]:
        """The parameters ``v`` gives an optimizer built at ``at``. A one-shot iterator
        (``filter(...)``) is consumed here; one an earlier consumer emptied gives nothing, and
        what it held goes to ``lost`` with its record."""
        if depth > 4:
            return []
        if isinstance(v, TensorV):
            return [v.tid]
        if isinstance(v, SeqV):
            out: List[int] = []
            for x in st.lists.get(v.lid, ()):
                out.extend(self.collect_params(x, st, depth + 1, at, lost))
            rec = consume(v, st, at) if at is not None else None
            if rec is not None and rec.consumer is not None:
                if lost is not None and out:
                    lost.append((rec, out))
                return []
            return out
        if isinstance(v, DictV):
            for k, x in st.dicts.get(v.did, ()):
                if k == ("c", "params"):
                    return self.collect_params(x, st, depth + 1, at, lost)
        return []

    def optimizer_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        attrs = st.attrs(obj.oid)
        tids = attrs["__params__"].value if isinstance(attrs.get("__params__"), ConstV) else ()
        opt_name = self.it.tensors.receiver_text(node) or "optimizer"
        span = self.it.span_of(node)
        if name == "step":
            closure = args[0] if args else kwargs.get("closure")
            if isinstance(closure, RefV) and closure.kind in ("func", "lambda", "method"):
                # LBFGS & co. run it (forward + backward) first; LBFGS then moves the parameters
                # and runs it again (a line search), and again
                q = attrs.get("__optim__")
                self.it.ev.call(closure, [], {}, st, node)
                if isinstance(q, ConstV) and str(q.value).endswith("LBFGS"):
                    self.update_in_place(st, list(tids), f"{opt_name}.step()", span, opt_name)
                    self.it.ev.call(closure, [], {}, st, node)
            self.check_polluted(obj, tids, opt_name, st, span)
            self.check_peer_pollution(tids, opt_name, st, span)
            fused = self.it.ev.truth_of(attrs.get("__fused__", FALSE)) is True
            self.note_gradless(obj.oid, tids, st, span)
            self.check_cleared(obj.oid, tids, opt_name, st, span)
            self.schedules.at_step(obj, st, node)
            # zero_grad() (set_to_none) with no backward since: those parameters have no
            # .grad, and step() leaves them untouched.
            none = st.meta.get("none_grads", frozenset())
            tids = [t for t in tids if t not in none]
            self.update_in_place(st, tids, f"{opt_name}.step()", span, opt_name, "fused_step" if fused else "step")
            meta = st.own("meta")
            meta["steps"] = meta.get("steps", ()) + ((obj.oid, st.next_seq(), span),)
            return NONE
        if name == "zero_grad":
            self.note_cleared(st, tids, span)
            grads = st.own("grads")
            for tid in tids:
                grads.pop(tid, None)
            to_none = kwargs.get("set_to_none", args[0] if args else TRUE)
            if self.it.ev.truth_of(to_none) is not False:
                meta = st.own("meta")
                meta["none_grads"] = frozenset(meta.get("none_grads", frozenset())) | frozenset(tids)
            return NONE
        if name == "add_param_group" and args:
            more = self.collect_params(args[0], st, at=span)
            st.set_attr(obj.oid, "__params__", ConstV(tuple(tids) + tuple(more)))
            meta = st.own("meta")
            opts = dict(meta.get("optimizers", {}))
            opts[obj.oid] = tuple(tids) + tuple(more)
            meta["optimizers"] = opts
            return NONE
        return UNKNOWN

    def note_cleared(self, st: State, tids: Sequence[int], span: Span) -> None:
        """A zeroing call (``opt.zero_grad()``, ``model.zero_grad()``) drops the gradients the backwards
        gave: remember which backward's, so a step that then finds none can say who took them."""
        cleared = {tid: (span, recs[-1][0], recs[-1][1]) for tid in tids for recs in (st.grads.get(tid),) if recs}
        if cleared:
            meta = st.own("meta")
            meta["cleared_grads"] = {**meta.get("cleared_grads", {}), **cleared}

    def note_gradless(self, oid: int, tids: Sequence[int], st: State, span: Span) -> None:
        """A step that runs before any backward gave its parameters a gradient (none has one, none was
        cleared): if the same step later finds the gradients cleared by a zeroing call, the step is the
        statement out of place (``zero_grad(); step(); loss.backward()``), not the zeroing call."""
        if not tids or any(st.grads.get(t) for t in tids) or set(tids) & set(st.meta.get("cleared_grads") or ()):
            return
        meta = st.own("meta")
        meta["gradless_steps"] = frozenset(meta.get("gradless_steps", frozenset())) | {(oid, span)}

    def check_cleared(self, oid: int, tids: Sequence[int], opt_name: str, st: State, span: Span) -> None:
        """GW740: ``loss.backward(); opt.zero_grad(); opt.step()`` — the step finds no gradient on any
        parameter it holds, because a zeroing call cleared, after the backward, gradients no step of this
        optimizer had applied yet. The step changes nothing (``set_to_none``: it skips every parameter).
        Reported at the zeroing call; gradients cleared after a step (``step(); zero_grad()``) were used."""
        cleared = st.meta.get("cleared_grads")
        if not cleared or not tids or any(st.grads.get(t) for t in tids):
            return
        if set(tids) & getattr(getattr(self.it, "flow", None), "manual_grads", set()):
            return  # `p.grad = g` (meta-gradients, restored gradients): the step has what the program gave it
        last = max((seq for o, seq, _ in st.meta.get("steps", ()) if o == oid), default=-1)
        lost = [cleared[t] for t in tids if t in cleared and cleared[t][2] > last]
        if not lost:
            return
        zspan, bspan, _ = max(lost, key=lambda r: r[2])
        early = (oid, span) in st.meta.get("gradless_steps", ())
        key = ("cleared", span if early else zspan)
        if key in self.reported_cleared:
            return
        self.reported_cleared.add(key)
        if early:  # the step runs before the backward of its iteration, right after the zeroing
            self.it.emit(Event("grads_cleared_before_step", span, {
                "why": f"`{opt_name}.step()` runs before the backward at line {bspan.row}: at its first run no "
                       f"gradient exists yet, and the gradients each backward computes are cleared by the zeroing "
                       f"call at line {zspan.row} before this step runs again",
                "fix": "call the step after the backward"},
                related=(Related(bspan, "the backward whose gradients no step applies", "backward"),
                         Related(zspan, "clears them before the step", "note"))))
            return
        self.it.emit(Event("grads_cleared_before_step", zspan, {
            "why": f"this clears the gradients the backward at line {bspan.row} computed before `{opt_name}.step()` "
                   f"at line {span.row} applies them",
            "fix": "clear them before the backward or after the step"},
            related=(Related(bspan, "the backward whose gradients are cleared", "backward"),
                     Related(span, "this step finds no gradient", "step"))))

    def check_clip(self, qual: str, params: Value, st: State, node: ast.AST) -> None:
        """GW739: gradient clipping handed a generator (``params = model.parameters()``) that something
        already read to its end (the optimizer built over it, an earlier clipping call): it gets no
        parameter and clips nothing. Reported where the generator is made (``list(...)`` is the fix)."""
        span = self.it.span_of(node)
        rec = consume(params, st, span)
        if rec is None or rec.consumer is None or rec.consumer == span:
            return
        key = ("clip", rec.made)
        if key in self.reported_cleared:
            return
        self.reported_cleared.add(key)
        first = "the optimizer built" if any(rec.consumer == s for s in getattr(getattr(self.it, "flow", None), "opt_sites", {}).values()) \
            else "the call"
        self.it.emit(Event("clip_exhausted_params", rec.made, {
            "what": rec.what, "first": first, "first_line": rec.consumer.row, "clip": qual.rsplit(".", 1)[-1],
            "clip_line": span.row},
            related=(Related(rec.consumer, "reads the generator to its end", "note"),
                     Related(span, "clips an empty list", "note"))))

    def update_in_place(self, st: State, tids: Sequence[int], label: str, span: Span, owner: str,
                        kind: str = "step") -> None:
        """An optimizer-like update of parameters: in-place writes under no_grad (each bumps the
        version a graph that saved the parameter checks)."""
        saved_mode = st.grad_enabled
        st.grad_enabled = False
        try:
            for tid in tids:
                if tid in st.t:
                    self.it.writes.do_write(st, tensor_value(tid), label, span, kind=kind, optimizer=owner, name=st.t[tid].name)
        finally:
            st.grad_enabled = saved_mode

    def check_polluted(self, obj: ObjV, tids: Sequence[int], opt_name: str, st: State, span: Span) -> None:
        """GW503: this step uses gradients that an earlier backward, meant for another optimizer,
        accumulated into our parameters (a missing detach, no zero_grad in between)."""
        opts: Dict[int, Tuple[int, ...]] = st.meta.get("optimizers", {})
        steps = st.meta.get("steps", ())
        for tid in tids:
            recs = st.grads.get(tid, ())
            if len(recs) < 2:
                continue
            first_span, first_seq, first_roots = recs[0]
            if any(o == obj.oid and first_seq < seq < recs[-1][1] for o, seq, _ in steps):
                continue  # this optimizer already stepped on the first backward: never zeroed, not polluted
            last_leaves = set()
            for root in recs[-1][2]:
                last_leaves |= self.it.graph.leaves_under(root)
            for other_oid, other_tids in opts.items():
                if other_oid == obj.oid:
                    continue
                if not last_leaves & set(other_tids):
                    continue  # our own loss does not go through the other model: shared trunk, not a GAN
                stepped = any(o == other_oid and seq > first_seq for o, seq, _ in steps)
                if not stepped:
                    continue
                merge = self.merge_node(first_roots, set(tids), set(other_tids))
                if merge is None:
                    continue
                where = merge.span
                self.it.emit(Event("polluted_grads", where, {
                    "params": "the parameters of `" + opt_name + "`", "name": "its input",
                    "backward_line": first_span.row, "opt": opt_name, "step_line": span.row},
                    related=(Related(first_span, "this backward accumulates into them", "backward"),
                             Related(span, f"`{opt_name}.step()` uses the polluted gradients", "step"))))
                return

    def check_peer_pollution(self, tids: Sequence[int], opt_name: str, st: State, span: Span) -> None:
        """GW507, reported when this step applies gradients that a loss sent into a peer model
        through a target it did not detach."""
        hits = st.meta.get("peer_hits", {})
        if not hits:
            return
        for tid in tids:
            for rec in st.grads.get(tid, ()):
                for ev in hits.get(rec[1], ()):
                    if tid in ev.facts.get("theirs", ()):
                        self.it.emit(Event(ev.kind, ev.span, dict(ev.facts, step=f"{opt_name}.step()", step_line=span.row),
                                           ev.related + (Related(span, "this step applies those gradients", "step"),)))
                        return

    def merge_node(self, roots: Sequence[Any], mine: set, theirs: set) -> Any:
        """The first node where a path from our parameters meets the other optimizer's parameters."""
        reach: Dict[int, Tuple[bool, bool]] = {}
        order = walk_nodes(roots)
        for n in sorted(order, key=lambda n: n.seq):
            a = any(t in mine for t in n.leaves) or any(reach.get(p.id, (False, False))[0] for p in n.inputs)
            b = any(t in theirs for t in n.leaves) or any(reach.get(p.id, (False, False))[1] for p in n.inputs)
            reach[n.id] = (a, b)
        best = None
        for n in order:
            a, b = reach[n.id]
            if a and b and any(reach.get(p.id, (False, False)) == (True, False) for p in n.inputs):
                if best is None or n.seq < best.seq:
                    best = n
        return best

    def construct_swa(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                      node: ast.AST) -> Value:
        """``AveragedModel(model)``: a deep copy of the model (its parameters are new leaves that
        require grad, so a forward through it records a graph that saves them) whose
        ``update_parameters(model)`` rewrites them in place. SWALR and the helpers: opaque."""
        if qual.rsplit(".", 1)[-1] != "AveragedModel":
            return UNKNOWN
        model = args[0] if args else kwargs.get("model", UNKNOWN)
        if not isinstance(model, ObjV):
            return UNKNOWN
        obj = ObjV(fresh_id())
        copy = self.it.builtins.deepcopy(model, st, {})
        for k, v in (("module", copy), ("__averaged__", TRUE), ("__module__", TRUE), ("training", TRUE),
                     ("__span__", ConstV(self.it.span_of(node)))):
            st.set_attr(obj.oid, k, v)
        meta = st.own("meta")
        owners = dict(meta.get("averaged_params", {}))
        for _, t in self.it.modules.module_params(copy, st):
            st.update_t(t.tid, name=(st.t[t.tid].name or "parameter") + " (averaged copy)")
            owners[t.tid] = obj.oid  # checks/averaged.py: a loss trained through this copy
        meta["averaged_params"] = owners
        return obj
