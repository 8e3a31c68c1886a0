"""In-place writes: the version bump, and the checks PyTorch makes on the spot (a leaf that
requires grad, a view of one, an expanded tensor, a view of a multi-output op raise at once),
writes through ``.data`` that it cannot see, and the hazards a write sets up for a later
backward (policy weights, hidden writes inside torch).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.autograd import _any_rg
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    Backward, Node, Saved, State, TInfo, TensorV, Value, Write, tensor_value, walk_nodes,
)


# in-place writes torch allows into an expanded tensor (measured, torch 2.13: they fill every
# element with one value, so the shared memory holds it either way)
FILLS_EXPANDED_OK = frozenset({"fill_", "zero_", "masked_fill_", "index_fill_"})


class Writes:
    """The ``writes`` role: in-place writes and their on-the-spot checks."""

    def __init__(self, it: Any) -> None:
        self.it = it

    def do_write(self, st: State, target: TensorV, opname: str, span: Span, *, kind: str = "user",
                 stmt_span: Optional[Span] = None, name: str = "", single_element: bool = False,
                 site: Optional[Span] = None, optimizer: str = "", fix_facts: Optional[Dict[str, Any]] = None,
                 leaf_check: bool = True) -> str:
        """Record an in-place write to ``target`` after PyTorch's on-the-spot checks.

        Returns how the write landed: "data" (through .data: no version bump), "bumped".
        Raises Halt where PyTorch raises at once.
        """
        info = st.t[target.tid]
        name = name or info.name or "tensor"
        ff = dict(fix_facts or {})
        if info.grad_output and kind == "user":
            self.it.emit(Event("grad_output_inplace", span, {"op": opname, "name": name, "fn": info.grad_output,
                                                             "alias_of": "" if name == "grad_output" else "a view of "},
                               fix_facts=ff))
        if info.ctx_saved and kind == "user":
            self.it.emit(Event("ctx_saved_inplace", span, {"op": opname, "name": name}, fix_facts=ff))
            kind = "ctx_saved"
        if st.grad_enabled and info.custom_out and info.rg is not False and kind in ("user", "module"):
            fn, apply_span = info.custom_out
            self.it.emit(Event("custom_out_inplace", site or span, {"op": opname, "name": name, "fn": fn,
                                                                  "apply_line": apply_span.row},
                               related=(Related(apply_span, f"`{fn}.apply` returns its input here", "created"),),
                               fix_facts=ff))
            raise Halt()
        if st.grad_enabled and info.multi_view and info.rg is True and kind in ("user", "module"):
            viewop, vspan = info.multi_view
            self.it.emit(Event("multi_view_inplace", site or span, {"op": opname, "name": name, "viewop": viewop,
                                                                  "view_line": vspan.row},
                               related=(Related(vspan, f"`{viewop}` returns several views", "created"),),
                               fix_facts=ff))
            raise Halt()
        if info.expanded is not None and kind in ("user", "module", "ctx_saved") and opname.lstrip(".").split("(")[0] in FILLS_EXPANDED_OK:
            # measured (torch 2.13): fill_/zero_ (masked_fill_/index_fill_ with a deprecation
            # warning) write into an expanded tensor without raising; a backward through the
            # written tensor then raises. Watched on its node: reported only if one runs through it.
            if st.grad_enabled and info.rg is True and info.grad_fn is not None:
                self.it.backward.watched.setdefault(info.grad_fn.id, Event("expanded_write", site or span, {
                    "op": opname, "name": name, "expand_line": info.expanded.row,
                    "tail": ": the write itself is allowed, but the backward through it raises (more than one element "
                            "refers to a single memory location)"},
                    related=(Related(info.expanded, "expanded here", "created"),),
                    fix_facts=dict(ff, expand_span=info.expanded)))
        elif info.expanded is not None and kind in ("user", "module", "ctx_saved"):
            tail = "; a write through integer indices does not raise: it silently changes every broadcast " \
                "copy" if single_element else \
                ": raises (more than one element refers to a single memory location)"
            where = site or span
            related = (Related(info.expanded, "expanded here", "created"),)
            if not self.it.graph.in_current_function(info.expanded) and not self.it.foreign_stack:
                # made elsewhere and kept (a buffer registered in __init__ and updated in
                # forward): the expand is the line to change
                where, related = info.expanded, (Related(site or span, "written in place here", "write"),)
            self.it.emit(Event("expanded_write", where,
                               {"op": opname, "name": name, "expand_line": info.expanded.row, "tail": tail},
                               related=related,
                               fix_facts=dict(ff, expand_span=info.expanded),
                               severity=2 if single_element else None))
            if not single_element:
                raise Halt()
        if kind == "user" and info.param:
            owner = self.it.graph.optimizer_method_running()
            if owner is None and not st.grad_enabled and self.it.call_stack and self.it.call_stack[-1].name != "__init__":
                owner = f"{self.it.call_stack[-1].name}()"  # a no_grad update routine (an EMA update)
            if owner is not None:
                # a parameter update made by user code (SAM.first_step, an EMA update): a step,
                # reported at its call
                kind, opname, optimizer = "step", owner, optimizer or owner.split(".")[0].rstrip("()")
        if kind == "user":
            self.note_hidden_write(st, info, span, opname, name)
        if info.data_alias:
            seq = st.next_seq()
            w = Write(counter=info.counter, storage=info.storage, version_after=st.version(info.counter),
                      seq=seq, span=span, op=opname, kind="data" if kind != "fused_step" else kind, name=name,
                      site=site, optimizer=optimizer)
            dw = st.own("data_writes")
            dw[info.storage] = dw.get(info.storage, ()) + (w,)
            return "data"
        if kind == "fused_step":
            seq = st.next_seq()
            w = Write(counter=info.counter, storage=info.storage, version_after=st.version(info.counter),
                      seq=seq, span=span, op=opname, kind=kind, name=name, optimizer=optimizer)
            dw = st.own("data_writes")
            dw[info.storage] = dw.get(info.storage, ()) + (w,)
            return "data"
        if leaf_check and st.grad_enabled and kind in ("user", "module"):
            leaf = self.it.graph.leaf_of(st, target)
            if leaf is not None:
                what = "parameter" if leaf.param else "tensor"
                hint = "wrap it in `with torch.no_grad():`"
                severity = None
                if self.it.standalone and self.it.call_stack and leaf.param and leaf.created is not None and \
                        self.it.graph.in_function(leaf.created, self.it.call_stack[0]):
                    # a function nobody in this file calls builds a module and writes its weights
                    # (a converter, a loader): its callers' grad mode decides, which we cannot see
                    hint = "unless its callers run it under `torch.no_grad()`; nothing in this file calls it"
                    severity = 3
                self.it.emit(Event("leaf_inplace", site or span,
                                   {"op": opname, "name": name, "what": what, "hint": hint}, severity=severity,
                                   related=((Related(leaf.created, "the leaf is created here", "created"),)
                                         if leaf.created else ()),
                                   fix_facts=dict(ff, stmt_span=stmt_span)))
                raise Halt()
        seq = st.next_seq()
        versions = st.own("versions")
        versions[info.counter] = versions.get(info.counter, 0) + 1
        w = Write(counter=info.counter, storage=info.storage, version_after=versions[info.counter], seq=seq,
                  span=span, op=opname, kind=kind, name=name, site=site, optimizer=optimizer,
                  stack=tuple(self.it.call_spans))
        writes = st.own("writes")
        writes[info.counter] = writes.get(info.counter, ()) + (w,)
        if ff:
            st.own("meta")[("fix", seq)] = ff
        return "bumped"

    def detach_point(self, target: Node, theirs: Set[int], consumers: Dict[int, List[Node]]) -> Optional[Span]:
        """Where ``.detach()`` belongs on the way from another model's output to a target: just
        after the last place that output is also used for something else (its own loss), and
        in the frame where those uses part (``f3`` passed to a distillation helper: the call;
        ``teacher_probs = teacher_lprobs.exp()`` inside the loss function: that line)."""
        chain = [target]
        while not set(chain[-1].leaves) & theirs:
            nxt = next((p for p in chain[-1].inputs if self.it.graph.leaves_under(p) & theirs), None)
            if nxt is None or len(chain) > 64:
                return None
            chain.append(nxt)
        # chain: target ... teacher's last own node; find the last node (from the teacher side)
        # whose output has other uses than this chain
        branch, after = chain[-1], chain[-2] if len(chain) > 1 else None
        for i in range(len(chain) - 1, 0, -1):
            users = consumers.get(chain[i].id, [])
            if len(users) > 1:
                branch, after = chain[i], chain[i - 1]
        if after is None:
            return None
        users = consumers.get(branch.id, []) or [after]
        shared = min(len(u.stack) for u in users)
        for u in users:
            while shared and tuple(u.stack[:shared]) != tuple(after.stack[:shared]):
                shared -= 1
        return after.stack[shared] if len(after.stack) > shared else after.span

    def check_policy_weight(self, st: State, operands: Sequence[TensorV], node: Node, span: Span) -> None:
        """``log_prob * advantage`` where the advantage still carries a graph into parameters
        the log-probability does not go through (a critic): the policy-gradient term also
        trains the critic. Watched until a backward reaches the product (GW506)."""
        if len(operands) != 2:
            return
        for lp, w in (operands, operands[::-1]):
            li, wi = st.t.get(lp.tid), st.t.get(w.tid)
            if li is None or wi is None or li.logprob != "action" or wi.logprob or wi.rg is not True or \
                    wi.grad_fn is None:
                continue
            mine = self.it.graph.leaves_under(li.grad_fn) if li.grad_fn is not None else set()
            theirs = {t for t in self.it.graph.leaves_under(wi.grad_fn) - mine if t in st.t and st.t[t].param}
            trained = {t for params in st.meta.get("optimizers", {}).values() for t in params}
            if not theirs & trained:
                continue  # nothing trains what computed the weight: its gradients are wasted, not wrong
            where = wi.held_at or wi.stored_at or (self.it.graph.site_here(wi.grad_fn.stack, wi.grad_fn.span))
            self.it.backward.watched[node.id] = Event("policy_weight_not_detached", where, {
                "name": wi.name or "the weight", "lp": li.name or "the log-probability", "mul_line": span.row,
                "weight_node": wi.grad_fn, "mul_span": span, "tail": ""},
                (Related(span, "multiplied with the log-probability here", "call"),))
            return

    def policy_site(self, ev: Event, consumers: Dict[int, List[Node]]) -> Tuple[Span, Dict[str, Any]]:
        """Where GW506's ``.detach()`` belongs: where the weight is made when nothing else uses
        it; in the policy term itself when it also feeds another loss (``adv`` in the critic's
        ``adv.pow(2)``), which a detach at its definition would cut."""
        wnode = ev.facts.get("weight_node")
        if wnode is not None and len(consumers.get(wnode.id, [])) > 1:
            return ev.facts["mul_span"], {"operand": ev.facts.get("name", "")}
        return ev.span, {}

    def policy_weight_frees(self, st: State, n: Node, first: Backward, facts: Dict[str, Any],
                            related: List[Related]) -> bool:
        """A freed graph explained by GW506: the policy loss's backward ran into the critic
        through an undetached weight and freed what the critic's own loss then needs."""
        ran = {m.id: m for m in walk_nodes(first.roots)} if first.roots else {}
        for mid, ev in self.it.backward.watched.items():
            if ev.kind != "policy_weight_not_detached" or mid not in ran:
                continue
            wnode = ev.facts.get("weight_node")
            if wnode is None or not self.it.backward._reaches(wnode, n):
                continue
            span = ev.facts["mul_span"]
            self.it.emit(Event("policy_weight_not_detached", span,
                               dict(ev.facts, backward_line=first.span.row,
                                 tail=f", and frees the graph the backward at line {facts['backward_line']} needs, "
                                      "which raises"),
                               tuple(related) + ev.related, fix_facts={"operand": ev.facts.get("name", "")},
                               severity=1))
            return True
        return False

    def saves_a_view_of(self, out: Value, weight: Value, st: State) -> None:
        """``nn.Linear`` / ``F.linear`` save ``weight.t()``, a view: replacing ``weight.data``
        afterwards does not reach what backward reads (measured)."""
        if not isinstance(out, TensorV) or not isinstance(weight, TensorV) or out.tid not in st.t:
            return
        node = st.t[out.tid].grad_fn
        if node is not None:
            node.saved = tuple(replace(s, view=True) if s.tid == weight.tid else s for s in node.saved)

    def note_hidden_write(self, st: State, info: TInfo, span: Span, opname: str, name: str) -> None:
        """A write through a ``.detach()`` / ``.data`` alias of a tensor that is part of a graph:
        later ops read the new values, but autograd differentiates the old computation (a
        backward that reaches that graph gets silently wrong gradients: GW602)."""
        orig = st.t.get(info.alias_of) if info.alias_of is not None else None
        if orig is None or orig.grad_fn is None or orig.rg is not True or orig.param:
            return
        meta = st.own("meta")
        rec = (orig.grad_fn.id, st.seq, span, opname, name or info.name, orig.name)
        meta["hidden_writes"] = meta.get("hidden_writes", ()) + (rec,)

    def hidden_write_events(self, st: State, order: Sequence[Node], span: Span) -> None:
        recs = st.meta.get("hidden_writes", ())
        if not recs:
            return
        ran = {n.id for n in order}
        for node_id, _, wspan, opname, name, orig in recs:
            if node_id in ran and self.it.event_key("data_write", wspan) not in self.it.events:
                self.it.emit(Event("hidden_write", wspan, {"op": opname, "name": name or "tensor",
                                                         "orig": orig or "the tensor", "backward_line": span.row},
                                   (Related(span, "this backward differentiates the unmodified computation",
                                         "backward"),)))

    def inplace_autograd(self, st: State, target: TensorV, info: Any, others: Sequence[Value], span: Span,
                         opname: str, *, report_span: Optional[Span] = None, call_span: Optional[Span] = None) -> None:
        """After an in-place op on ``target``: its new grad_fn, and what the op saved."""
        if not st.grad_enabled:
            return
        t = st.t[target.tid]
        if t.data_alias:
            return
        other_ts = [x for v in others for x in self.it.graph.slot_tensors(st, v)]
        rgs = [t.rg] + [_any_rg([st.t[x.tid].rg for x in self.it.graph.slot_tensors(st, v)]) if self.it.graph.slot_tensors(st, v)
                        else False for v in others]
        out_rg = _any_rg(rgs)
        if info is not None and not info.differentiable:
            out_rg = t.rg
        if out_rg is False or out_rg is None and t.rg is None and not other_ts:
            return
        seq = st.next_seq()
        saved: List[Saved] = []
        if info is not None:
            for i, v in enumerate(others, start=1):
                if info.saves(i, rgs) is True:
                    saved.extend(self.it.graph.saved_rec(st, x, seq) for x in self.it.graph.slot_tensors(st, v))
        node = self.it.graph.make_node(st, opname, span, [target] + other_ts, saved, seq, report_span=report_span,
                                       call_span=call_span)
        if info is not None and (info.saves("out", rgs) is True or info.saves(0, rgs) is True):
            node.saved = node.saved + (self.it.graph.saved_rec(st, target, seq, is_output=True),)
        st.update_t(target.tid, grad_fn=node, rg=True if out_rg else out_rg, leaf=False)
        if t.base is not None and t.base in st.t:
            base = st.t[t.base]
            if not base.leaf or base.rg is not True:
                bseq = st.next_seq()
                bnode = self.it.graph.make_node(st, "CopySlices", span, [tensor_value(t.base), target], (), bseq)
                st.update_t(t.base, grad_fn=bnode, rg=True if out_rg else base.rg, leaf=False)
