"""Autograd semantics over the abstract state: ops that record nodes and save tensors,
in-place writes (with the checks PyTorch makes on the spot), and backward (with the checks it
makes when it runs a node: freed graph, version mismatch; plus the .data writes it cannot see).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.checks.flowfacts import NumberV
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    UNKNOWN, Backward, ConstV, Node, ObjV, RefV, Saved, SeqV, State, TensorV, TInfo, UnknownV, Value, Write, fresh_id,
    make_tinfo, new_tinfo, saved_value, tensor_value, view_tinfo, walk_nodes,
)


class AutogradMixin:
    # ------------------------------------------------------------------ setup
    def _init_autograd(self) -> None:
        self.consumers: List[Dict[str, Any]] = []
        self.accumulations: Dict[Tuple[int, int], Dict[str, Any]] = {}
        self.call_spans: List[Span] = []
        self.call_args: List[FrozenSet[int]] = []  # the tensors passed to each running call
        self.loop_depth: Dict[int, int] = {}
        # custom Function nodes whose backward reads an intermediate of forward: (fn, where kept)
        self.custom_middles: Dict[int, Tuple[str, Span]] = {}
        # hazards that only matter if a backward runs through a node: node id -> the event
        self.watched: Dict[int, Event] = {}
        # gradient nodes of create_graph=True backwards through such a node
        self.incomplete_grads: Dict[int, Tuple[str, Span, Span]] = {}

    # ------------------------------------------------------------------ tensors
    def new_tensor(self, st: State, rg: Optional[bool] = False, node: Any = None, name: str = "",
                   param: bool = False, grad_fn: Optional[Node] = None, dtype: Optional[str] = None,
                   created: Optional[Span] = None) -> TensorV:
        """A new tensor, made at ``node`` (else at the span ``created``, if given). Call it with
        keywords; the override in flow.py passes them on in this order."""
        tid = fresh_id()
        st.set_t(tid, new_tinfo(tid, tid, rg, grad_fn is None, grad_fn, param, name,
                                self.span_of(node) if node is not None else created, st.loop_ctx,
                                "float" if param else dtype))
        return tensor_value(tid)

    def unknown_tensor(self, st: State, name: str, rg: Optional[bool] = None) -> TensorV:
        """A function argument of unknown origin: maybe requires grad, maybe a leaf."""
        tid = fresh_id()
        st.set_t(tid, new_tinfo(tid, tid, rg, False, None, False, name, None, st.loop_ctx, None))
        return tensor_value(tid)

    def alias_tensor(self, st: State, src: TensorV, *, kind: str, span: Optional[Span], rg: Optional[bool],
                     grad_fn: Optional[Node], opname: str = "") -> TensorV:
        """A tensor sharing ``src``'s version counter (a view, a detach, a same-object return)."""
        s = st.t[src.tid]
        if kind == "may_alias" and s.expanded is not None:
            # reshape/flatten of an expanded tensor cannot be a view: it copies
            return self.new_tensor(st, rg=rg, grad_fn=grad_fn)
        tid = fresh_id()
        if kind == "detach":
            info = make_tinfo(counter=s.counter, storage=s.storage, rg=False, leaf=True, name=s.name,
                              created=span, loop_ctx=st.loop_ctx, expanded=s.expanded, grad_output=s.grad_output,
                              ctx_saved=s.ctx_saved, data_alias=s.data_alias, dtype=s.dtype, alias_of=src.tid)
        else:
            info = view_tinfo(s, rg, grad_fn is None and not rg, grad_fn, s.base if s.base is not None else src.tid,
                              span, st.loop_ctx, span if kind == "expand" else s.expanded,
                              (opname, span) if kind == "multi_view" else s.multi_view)
        st.set_t(tid, info)
        return tensor_value(tid)

    def tensor_rg(self, st: State, v: Value) -> Optional[bool]:
        if isinstance(v, TensorV):
            info = st.t.get(v.tid)
            return info.rg if info is not None else None
        if isinstance(v, SeqV):
            rgs = [self.tensor_rg(st, x) for x in st.lists.get(v.lid, ()) if isinstance(x, TensorV)]
            return _any_rg(rgs)
        return False

    def slot_tensors(self, st: State, v: Value) -> List[TensorV]:
        if isinstance(v, TensorV):
            return [v]
        if isinstance(v, SeqV):
            return [x for x in st.lists.get(v.lid, ()) if isinstance(x, TensorV)]
        return []

    def saved_rec(self, st: State, v: TensorV, seq: int, is_output: bool = False, maybe: bool = False) -> Saved:
        info = st.t[v.tid]
        return saved_value(v.tid, info.counter, info.storage, st.versions.get(info.counter, 0), seq, info.name,
                           is_output, maybe)

    # ------------------------------------------------------------------ ops
    def apply_op(self, st: State, info: Any, slots: Sequence[Value], span: Span, opname: str, *,
                 report_span: Optional[Span] = None, call_span: Optional[Span] = None,
                 extra_saved: Sequence[TensorV] = (), force_rg: Optional[bool] = None) -> List[TensorV]:
        """Run a functional op: returns its tensor outputs (``info.n_outputs`` of them)."""
        t_of = st.t
        tensors = [[v] if v.__class__ is TensorV else self.slot_tensors(st, v) for v in slots]
        rgs = [_any_rg([t_of[t.tid].rg for t in ts]) if ts else False for ts in tensors]
        differentiable = True if info is None else info.differentiable
        if not st.grad_enabled or not differentiable:
            out_rg: Optional[bool] = False
        elif force_rg is not None:
            out_rg = force_rg
        else:
            out_rg = _any_rg(rgs)
        node = None
        if out_rg is not False:
            seq = st.next_seq()
            saved: List[Saved] = []
            if info is not None:
                for i, ts in enumerate(tensors):
                    kept = info.saves(i, rgs)
                    if kept is True or (kept is None and out_rg is None):
                        for t in ts:
                            saved.append(self.saved_rec(st, t, seq, maybe=kept is None))
            for t in extra_saved:
                saved.append(self.saved_rec(st, t, seq))
            inputs: List[TensorV] = []
            opaque = False
            for v, ts in zip(slots, tensors):
                if ts:
                    inputs.extend(ts)
                elif not opaque and _may_hide_tensor(v):
                    opaque = True
            node = self.make_node(st, opname, span, inputs, saved, seq,
                                  report_span=report_span, call_span=call_span, opaque=opaque)

        n_out = max(1, info.n_outputs if info is not None else 1)
        nondiff = set(info.nondiff_outputs) if info is not None else set()
        alias = info.alias if info is not None else None
        outs: List[TensorV] = []
        for k in range(n_out):
            k_rg = False if k in nondiff else out_rg
            k_fn = None if k in nondiff else node
            if k == 0 and alias and len(tensors) > 0 and len(tensors[0]) == 1 and alias != "same":
                out = self.alias_tensor(st, tensors[0][0], kind=alias, span=span, rg=k_rg, grad_fn=k_fn,
                                        opname=opname)
            elif k == 0 and alias == "same" and tensors and len(tensors[0]) == 1:
                out = tensors[0][0]
            elif alias == "multi_view" and tensors and len(tensors[0]) == 1:
                out = self.alias_tensor(st, tensors[0][0], kind=alias, span=span, rg=k_rg, grad_fn=k_fn,
                                        opname=opname)
            else:
                out = self.new_tensor(st, rg=k_rg, grad_fn=k_fn, created=span)  # a leaf when k_fn is None
            outs.append(out)
        if node is not None and info is not None:
            for k, out in enumerate(outs):
                key = "out" if k == 0 else f"out{k}"
                kept = info.saves(key, rgs)
                if kept is True or (kept is None and out_rg is None):
                    node.saved = node.saved + (self.saved_rec(st, out, node.seq, is_output=True,
                                                              maybe=kept is None),)
        first = st.t[tensors[0][0].tid].logprob if tensors and tensors[0] else ""
        kind = "action" if opname == "log_prob" or first and opname in LOGPROB_SELECTORS else \
            "dist" if opname in LOGPROB_MAKERS else first if opname in LOGPROB_KEEPERS else ""
        if kind:
            for out in outs[:1]:
                st.update_t(out.tid, logprob=kind)
        elif opname in {"mul", "multiply", "__mul__", "__rmul__"} and node is not None:
            operands = [t for ts in tensors for t in ts]
            self.check_policy_weight(st, operands, node, span)
            dist = [t for t in operands if st.t[t.tid].logprob == "dist"]
            if len(operands) == 2 and len(dist) == 1:
                # `-(p_teacher * log_softmax(student)).sum()`: a soft cross-entropy written out
                other = operands[1] if operands[0] is dist[0] else operands[0]
                self.check_peer_target(dist[0], other, st, span, node)
        if any(t_of[t.tid].dual for ts in tensors for t in ts):
            for out in outs:
                st.update_t(out.tid, dual=True)
            if opname in JVP_WRITES_OUTPUT and outs:
                # softmax's forward-mode derivative (logsumexp_jvp) writes into the result in
                # place inside PyTorch, after its backward saved it (pytorch#162350)
                self.do_write(st, outs[0], f"write by the forward-mode derivative of `{opname}` (inside PyTorch)",
                              span, kind="internal", leaf_check=False, name=f"{opname} output")
        return outs

    def make_node(self, st: State, opname: str, span: Span, inputs: Sequence[TensorV], saved: Sequence[Saved],
                  seq: int, report_span: Optional[Span] = None, call_span: Optional[Span] = None,
                  custom: Any = None, opaque: bool = False) -> Node:
        # (the last four by keyword; the override in flow.py passes them on in this order)
        parents: List[Node] = []
        names: List[str] = []
        tids: List[int] = []
        leaves: List[int] = []
        stale_site: Optional[Span] = None
        for t in inputs:
            ti = st.t.get(t.tid)
            if ti is None:
                continue
            g = ti.grad_fn
            if g is not None:
                for p in parents:
                    if p is g:
                        break
                else:
                    parents.append(g)
                    names.append(ti.name)
                    tids.append(t.tid)
                if g.id in st.freed and stale_site is None and self.call_spans:
                    stale_site = self.passed_in_at(st, t.tid)
            elif ti.rg and ti.leaf:
                leaves.append(self.leaf_root(st, t.tid))
            elif ti.rg is None:
                opaque = True
        # positionally, in the order of Node's fields (keyword matching cost as much as the rest
        # of the call; tests/test_engine_model.py checks the order)
        return Node(opname, span, tuple(parents), tuple(leaves), tuple(saved), seq, st.loop_ctx, report_span,
                    call_span, custom, tuple(self.call_spans), "", tuple(names), stale_site, tuple(tids), False,
                    tuple(self.call_stack), tuple(self.call_args), opaque)

    def passed_in_at(self, st: State, tid: int) -> Optional[Span]:
        """The call through which an outer frame's variable holding ``tid`` reached this code.

        A carried-over value that the loop's own code holds in a variable (``hidden``) is
        reported where that variable is passed in; one held only by an object (``self.h``)
        is reported where the callee reads it."""
        for i in range(min(len(st.frames) - 1, len(self.call_spans))):
            for v in self.held_in_frame(st, i):
                if isinstance(v, TensorV) and v.tid == tid or isinstance(v, SeqV) and any(
                        isinstance(x, TensorV) and x.tid == tid for x in st.lists.get(v.lid, ())):
                    return self.call_spans[i]
        return None

    def held_in_frame(self, st: State, i: int) -> List[Value]:
        """The tensors and sequences frame ``i`` binds. A frame that forks share is never
        written in place (copy on write), so its list is kept: the module's globals are
        scanned once per analysis, not once per node (which made large files quadratic)."""
        frame = st.frames[i]
        if not st.frame_shared(i):
            return [v for v in frame.values() if isinstance(v, (TensorV, SeqV))]
        cache = self.__dict__.setdefault("_held_cache", {})
        hit = cache.get(id(frame))
        if hit is None or hit[0] is not frame:
            hit = cache[id(frame)] = (frame, [v for v in frame.values() if isinstance(v, (TensorV, SeqV))])
        return hit[1]

    def site_here(self, stack: Sequence[Span], span: Span) -> Span:
        """Where, in the code now running, something recorded with call ``stack`` (outermost
        first) at ``span`` happened: the call, in the deepest frame both share, that led to it
        (``netD(fake)`` at the user's call site, not the conv inside ``netD.forward``)."""
        here = self.call_spans
        p = 0
        while p < len(stack) and p < len(here) and stack[p] == here[p]:
            p += 1
        return stack[p] if len(stack) > p else span

    def optimizer_method_running(self) -> Optional[str]:
        """``Cls.method()`` of the innermost method of a ``torch.optim.Optimizer`` subclass now
        running, if any."""
        for fdef in reversed(self.call_stack):
            cls = self.class_of_method(fdef)
            if cls is not None and cls.torch_base.startswith("torch.optim."):
                return f"{cls.name}.{fdef.name}()"
        return None

    def in_current_function(self, span: Span) -> bool:
        """Is ``span`` inside the function now running (the module body at top level)?"""
        fdef = self.call_stack[-1] if self.call_stack else None
        if fdef is None:
            return not any(self.in_function(span, d) for d in self.tree.body
                           if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        return self.in_function(span, fdef)

    @staticmethod
    def in_function(span: Span, fdef: Any) -> bool:
        return fdef.lineno <= span.row <= (fdef.end_lineno or fdef.lineno)

    def user_call_site(self, node: Node, carried: Set[int], start: int = 0) -> Span:
        """Where a value (the tensors ``carried``) enters the code that recorded ``node``: going
        down the call stack from the outermost frame, the first call that passes one of those
        tensors as an argument (``cal_gradient_penalty(netD, real, fake)``) or enters a model's
        ``forward`` (``netD(fake)``); the node's own line when the value was read from state at
        every level (``self.netD_patch(self.fake_B)`` inside a trainer's loss method)."""
        spans = list(node.stack) + [node.span]
        for j, fdef in enumerate(node.defs):  # spans[j] is the call that entered fdef
            if j < start:
                continue
            passed = node.frame_args[j] if j < len(node.frame_args) else frozenset()
            if passed & carried or fdef.name in ("forward", "_forward_impl"):
                return spans[j]
        return node.span

    @staticmethod
    def handed_over(node: Node, carried: Set[int], where: Span) -> Optional[int]:
        """The carried tensor passed at ``where`` (a call on ``node``'s stack), or the one
        ``node`` itself takes when ``where`` is its own line."""
        spans = list(node.stack)
        for j, span in enumerate(spans):
            if span == where and j < len(node.frame_args):
                got = node.frame_args[j] & carried
                return min(got) if got else None
        got = [t for t in node.input_tids if t in carried]
        return got[0] if got else None

    def carried_tids(self, node: Node, leaves: Set[int]) -> Set[int]:
        """The tensors on the way from ``leaves`` (a model's parameters) to ``node``."""
        out: Set[int] = set()
        seen: Set[int] = set()
        stack = [node]
        while stack:
            m = stack.pop()
            if m.id in seen:
                continue
            seen.add(m.id)
            for p, t in zip(m.inputs, m.input_tids):
                if self.leaves_under(p) & leaves:
                    out.add(t)
                    stack.append(p)
        return out

    def leaf_root(self, st: State, tid: int) -> int:
        info = st.t[tid]
        return info.base if info.base is not None and info.base in st.t else tid

    # ------------------------------------------------------------------ in-place writes
    def leaf_of(self, st: State, v: TensorV) -> Optional[TInfo]:
        """The leaf requiring grad that ``v`` is (or is a view of), if any."""
        info = st.t[v.tid]
        if info.data_alias or info.grad_site:
            return None
        if info.leaf and info.rg is True and info.base is None:
            return info
        if info.base is not None and info.rg is not False:
            base = st.t.get(info.base)
            if base is not None and base.leaf and base.rg is True and not base.data_alias:
                return base
        return None

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
            self.emit(Event("grad_output_inplace", span, {"op": opname, "name": name, "fn": info.grad_output,
                                                          "alias_of": "" if name == "grad_output" else "a view of "},
                            fix_facts=ff))
        if info.ctx_saved and kind == "user":
            self.emit(Event("ctx_saved_inplace", span, {"op": opname, "name": name}, fix_facts=ff))
            kind = "ctx_saved"
        if st.grad_enabled and info.custom_out and info.rg is not False and kind in ("user", "module"):
            fn, apply_span = info.custom_out
            self.emit(Event("custom_out_inplace", site or span, {"op": opname, "name": name, "fn": fn,
                                                                  "apply_line": apply_span.row},
                            related=(Related(apply_span, f"`{fn}.apply` returns its input here", "created"),),
                            fix_facts=ff))
            raise Halt()
        if st.grad_enabled and info.multi_view and info.rg is True and kind in ("user", "module"):
            viewop, vspan = info.multi_view
            self.emit(Event("multi_view_inplace", site or span, {"op": opname, "name": name, "viewop": viewop,
                                                                  "view_line": vspan.row},
                            related=(Related(vspan, f"`{viewop}` returns several views", "created"),),
                            fix_facts=ff))
            raise Halt()
        if info.expanded is not None and kind in ("user", "module", "ctx_saved"):
            tail = "; a single-element write silently changes every broadcast copy" if single_element else \
                ": raises (more than one element refers to a single memory location)"
            where = site or span
            related = (Related(info.expanded, "expanded here", "created"),)
            if not self.in_current_function(info.expanded) and not self.foreign_stack:
                # made elsewhere and kept (a buffer registered in __init__ and updated in
                # forward): the expand is the line to change
                where, related = info.expanded, (Related(site or span, "written in place here", "write"),)
            self.emit(Event("expanded_write", where,
                            {"op": opname, "name": name, "expand_line": info.expanded.row, "tail": tail},
                            related=related,
                            fix_facts=dict(ff, expand_span=info.expanded),
                            severity=2 if single_element else None))
            if not single_element:
                raise Halt()
        if kind == "user" and info.param:
            owner = self.optimizer_method_running()
            if owner is None and not st.grad_enabled and self.call_stack and self.call_stack[-1].name != "__init__":
                owner = f"{self.call_stack[-1].name}()"  # a no_grad update routine (an EMA update)
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
            leaf = self.leaf_of(st, target)
            if leaf is not None:
                what = "parameter" if leaf.param else "tensor"
                hint = "wrap it in `with torch.no_grad():`"
                severity = None
                if self.standalone and self.call_stack and leaf.param and leaf.created is not None and \
                        self.in_function(leaf.created, self.call_stack[0]):
                    # a function nobody in this file calls builds a module and writes its weights
                    # (a converter, a loader): its callers' grad mode decides, which we cannot see
                    hint = "unless its callers run it under `torch.no_grad()`; nothing in this file calls it"
                    severity = 3
                self.emit(Event("leaf_inplace", site or span,
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
                  stack=tuple(self.call_spans))
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
            nxt = next((p for p in chain[-1].inputs if self.leaves_under(p) & theirs), None)
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
            mine = self.leaves_under(li.grad_fn) if li.grad_fn is not None else set()
            theirs = {t for t in self.leaves_under(wi.grad_fn) - mine if t in st.t and st.t[t].param}
            trained = {t for params in st.meta.get("optimizers", {}).values() for t in params}
            if not theirs & trained:
                continue  # nothing trains what computed the weight: its gradients are wasted, not wrong
            where = wi.held_at or wi.stored_at or (self.site_here(wi.grad_fn.stack, wi.grad_fn.span))
            self.watched[node.id] = Event("policy_weight_not_detached", where, {
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
        for mid, ev in self.watched.items():
            if ev.kind != "policy_weight_not_detached" or mid not in ran:
                continue
            wnode = ev.facts.get("weight_node")
            if wnode is None or not self._reaches(wnode, n):
                continue
            span = ev.facts["mul_span"]
            self.emit(Event("policy_weight_not_detached", span,
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
            if node_id in ran and ("data_write", wspan.row, wspan.column, "") not in self.events:
                self.emit(Event("hidden_write", wspan, {"op": opname, "name": name or "tensor",
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
        other_ts = [x for v in others for x in self.slot_tensors(st, v)]
        rgs = [t.rg] + [_any_rg([st.t[x.tid].rg for x in self.slot_tensors(st, v)]) if self.slot_tensors(st, v)
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
                    saved.extend(self.saved_rec(st, x, seq) for x in self.slot_tensors(st, v))
        node = self.make_node(st, opname, span, [target] + other_ts, saved, seq, report_span=report_span,
                              call_span=call_span)
        if info is not None and (info.saves("out", rgs) is True or info.saves(0, rgs) is True):
            node.saved = node.saved + (self.saved_rec(st, target, seq, is_output=True),)
        st.update_t(target.tid, grad_fn=node, rg=True if out_rg else out_rg, leaf=False)
        if t.base is not None and t.base in st.t:
            base = st.t[t.base]
            if not base.leaf or base.rg is not True:
                bseq = st.next_seq()
                bnode = self.make_node(st, "CopySlices", span, [tensor_value(t.base), target], (), bseq)
                st.update_t(t.base, grad_fn=bnode, rg=True if out_rg else base.rg, leaf=False)

    # ------------------------------------------------------------------ backward
    def do_backward(self, st: State, roots: Sequence[Value], span: Span, *, retain: bool, accumulate: bool = True,
                    implicit: bool = False, inputs: Sequence[Value] = (), user_grad: bool = False) -> List[Node]:
        """Run a backward from ``roots``; returns the nodes it ran (latest first)."""
        root_nodes: List[Node] = []
        root_names: List[str] = []
        for r in roots:
            for t in self.slot_tensors(st, r):
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
            if n.id in st.freed and (n.saved or n.custom is not None or n.holds) and not implicit:
                use, via = parent.get(n.id), n
                while use is not None and use.id in st.freed:
                    use, via = parent.get(use.id), use  # the first node of the new graph on the way to n
                stale = ""
                if use is not None:
                    for p, nm in zip(use.inputs, use.input_names):
                        if p is via:
                            stale = nm
                self.freed_graph_event(st, n, use, order, span, root_names, stale)
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
                        raise Halt()
                for w in st.data_writes.get(s.storage, ()):
                    if w.seq > s.seq and (w.kind != "data_assign" or w.tid == s.tid and not s.view):
                        self.data_write_event(st, n, s, w, span, backward_desc)
            if n.custom is not None:
                danger = self.grad_output_danger(n, consumers.get(n.id, []), n in root_nodes and user_grad)
                self.analyse_custom_backward(st, n, span, danger)
        if implicit:
            return order
        self.hidden_write_events(st, order, span)
        for n in order:
            ev = self.watched.get(n.id)
            if ev is None:
                continue
            ev = Event(ev.kind, ev.span, dict(ev.facts, backward_line=span.row),
                       ev.related + (Related(span, "the backward that trains through it", "backward"),))
            if "target_node" in ev.facts:
                where = self.detach_point(ev.facts["target_node"], set(ev.facts["theirs"]), consumers)
                if where is not None:
                    ev = Event(ev.kind, where, ev.facts, ev.related, fix_facts={"node_span": where})
            elif "weight_node" in ev.facts:
                where, ff = self.policy_site(ev, consumers)
                ev = Event(ev.kind, where, ev.facts, ev.related, fix_facts=ff)
            if ev.kind == "peer_target_not_detached":
                # wrong only where the peer's gradients are used: asked for here
                # (autograd.grad(loss, peer_params)), or applied by an optimizer step before a
                # zero_grad clears them (reported by that step)
                wanted = {t.tid for v in inputs for t in self.slot_tensors(st, v)}
                if wanted & set(ev.facts.get("theirs", ())):
                    self.emit(Event(ev.kind, ev.span, dict(ev.facts, step="autograd.grad", step_line=span.row),
                                    ev.related))
                    continue
                meta = st.own("meta")
                hits = dict(meta.get("peer_hits", {}))
                hits[bseq] = hits.get(bseq, ()) + (ev,)
                meta["peer_hits"] = hits
            else:
                self.emit(ev)
        for n in order:
            if n.id in self.incomplete_grads:
                fn, kept, grad_span = self.incomplete_grads[n.id]
                self.emit(Event("double_backward_constant", kept, {"fn": fn, "grad_line": grad_span.row,
                                                                   "backward_line": span.row},
                                (Related(grad_span, "create_graph=True differentiates through it here", "call"),
                                 Related(span, "this backward uses that incomplete gradient", "backward"))))
        if st.loop_ctx:
            self.check_stale_retained(st, order, span)
        if self.accumulations:
            root_tids = {t.tid for r in roots for t in self.slot_tensors(st, r)}
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
        node = self.make_node(st, "grad", span, parents, (), st.next_seq())
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
            ts = self.slot_tensors(st, v)
            if not ts:
                return order
            for t in ts:
                info = st.t.get(t.tid)
                if info is None:
                    return order
                if info.grad_fn is not None:
                    stops.add(info.grad_fn.id)
                elif info.rg:
                    leaf_tids.add(self.leaf_root(st, t.tid))
                    leaf_tids.add(t.tid)
        needed: Dict[int, bool] = {}
        for n in sorted(order, key=lambda n: n.seq):  # inputs before the nodes that use them
            needed[n.id] = n.id not in stops and (bool(leaf_tids & set(n.leaves)) or any(
                p.id in stops or needed.get(p.id, False) for p in n.inputs))
        return [n for n in order if needed[n.id]]

    def on_backward(self, st: State, order: Sequence[Node], span: Span, implicit: bool) -> None:
        """Hook for the hover recorder (engine/explain/recorder.py); nothing to do in a plain run."""

    def implicit_backward(self, ret: Value, st: State, span: Span, user_grad: bool = False) -> None:
        tensors: List[TensorV] = []
        if isinstance(ret, TensorV):
            tensors = [ret]
        elif isinstance(ret, SeqV):
            tensors = [x for x in st.lists.get(ret.lid, ()) if isinstance(x, TensorV)]
        if not tensors:
            return
        try:
            self.do_backward(st, tensors, span, retain=True, accumulate=False, implicit=True, user_grad=user_grad)
        except Halt:
            pass

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
        related.append(Related(span, "a backward through what this returns would fail" if implicit
                               else "backward fails here", "backward"))
        timeline = self.timeline(st, s, n, w, span)
        facts = {"op": w.op, "name": w.name, "saver": n.op, "save_line": (n.call_span or n.report_span or n.span).row,
                 "version": s.version, "backward_line": span.row, "backward": backward_desc,
                 "cond": " (if its inputs require grad: we cannot tell here)" if s.maybe else ""}
        severity = 3 if s.maybe else None  # information: not provable from this code alone
        where = w.site or w.span
        if w.kind == "step":
            params = f"`{s.name}`" if s.name else "its parameters"
            facts.update(opt=w.optimizer or "optimizer", params=params, step=w.op)
            depth = len(self.call_spans)
            step_at = w.stack[depth] if len(w.stack) > depth else w.span  # a wrapper's step(): its call
            self.emit(Event("step_before_backward", step_at, facts, tuple(related), timeline,
                            fix_facts={"backward_span": span, "write": w}, severity=severity))
            return
        self.emit(Event("version_mismatch", where, facts, tuple(related), timeline,
                        fix_facts=dict(st.meta.get(("fix", w.seq), {}), write=w), severity=severity))

    def unchecked_event(self, st: State, n: Node, s: Saved, w: Write, span: Span, backward_desc: str) -> None:
        fn = n.custom[0].name if n.custom else n.op
        self.emit(Event("ctx_stash_modified", w.site or w.span,
                        {"op": w.op, "name": w.name, "fn": fn, "backward": backward_desc},
                        (self._save_related(n, s), Related(span, "backward silently uses the modified values here",
                                                          "backward"))))

    def data_write_event(self, st: State, n: Node, s: Saved, w: Write, span: Span, backward_desc: str) -> None:
        related = (self._save_related(n, s), Related(span, "backward silently uses the modified values here",
                                                     "backward"))
        facts = {"op": w.op, "name": w.name, "saver": n.op, "save_line": (n.call_span or n.report_span or n.span).row,
                 "version": s.version, "backward_line": span.row, "backward": backward_desc,
                 "cond": " (if its inputs require grad)" if s.maybe else "",
                 "how": "replacing its `.data`" if w.kind == "data_assign" else f"in-place {w.op} through `.data`"}
        if w.kind == "fused_step":
            facts.update(opt=w.optimizer or "optimizer", params=f"`{s.name}`" if s.name else "its parameters",
                         step=w.op)
            self.emit(Event("fused_step", w.span, facts, related))
            return
        self.emit(Event("data_write", w.site or w.span, facts, related, fix_facts={"write": w},
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
        facts = {"freed_line": first.span.row, "backward_line": span.row, "root": next((r for r in root_names if r), "loss"),
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
            depth = self.loop_depth.get(next((lid for lid, _ in st.loop_ctx if lid not in dict(origin.loop_ctx)), -1), 0)
            owned = {t for params in st.meta.get("optimizers", {}).values() for t in params}
            if len(origin.stack) > depth and self.leaves_under(origin) & owned:
                # a trained model's forward run once: the call, in the loop's own function, that
                # built it (recompute it in the loop)
                where = origin.stack[depth]
            elif len(origin.stack) > depth:
                # an untrained one is data: detach it where it is made, or at the call of the
                # model that makes it (never inside a model's forward)
                where = self.user_call_site(origin, set(), start=depth)
            stale_tid = next((t for p, t in zip(use.inputs, use.input_tids) if p is via), None) \
                if use is not None else None
            held = st.t[stale_tid].held_at if stale_tid in st.t else None
            if held is not None and held.row != where.row and len(origin.stack) > depth:
                where = held  # kept on an object by the code that built it (``self.bias = table[idx]``)
            self.emit(Event("graph_carried", where, facts, tuple(related), fix_facts={"node_span": where}))
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
            stored = (info.held_at or info.stored_at) if info is not None else None
            uspan = stored or use.stale_site or use.report_span or use.span
            if stored is not None:
                # what reads the old value back also reads this iteration's one, kept at the
                # same place (a loss history stacked for backward): a detach at the store would
                # cut the new value's path too
                for tid in use.input_tids:
                    t = st.t.get(tid)
                    if tid != stale_tid and t is not None and stored in (t.held_at, t.stored_at):
                        facts["fresh"] = False
            self.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif bumped and use is not None:
            uspan = use.stale_site or use.report_span or use.span
            self.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif self.policy_weight_frees(st, n, first, facts, related):
            pass
        elif stepped and use is not None:
            uspan = use.stale_site or use.report_span or use.span
            self.emit(Event("stale_use", uspan, facts, tuple(related), fix_facts={"use_span": uspan}))
        elif bumped or stepped:
            # the same loss backwarded again after the update: only a fresh forward is right
            facts["name"] = next((r for r in root_names if r), facts["name"])
            self.emit(Event("stale_use", span, facts, tuple(related), fix_facts={"use_span": span}))
        else:
            self.emit(Event("backward_frees", first.span, facts, tuple(related),
                            fix_facts={"backward_span": first.span}))

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
            depth = self.loop_depth.get(loop, 0) if loop is not None else len(self.call_spans)
            where = m.stack[depth] if len(m.stack) > depth else m.span
            if earlier and not before:
                crossing = self.iteration_crossing(st, order, m)
                info = st.t.get(crossing[1]) if crossing is not None else None
                if info is not None and (info.held_at or info.stored_at):
                    where = info.held_at or info.stored_at
            name = m.label or "tensor"
            self.emit(Event("stale_retained", where, {
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

    @staticmethod
    def leaves_under(n: Node) -> Set[int]:
        """The leaf tensors (parameters ...) a backward from ``n`` accumulates into."""
        return {t for m in walk_nodes([n]) for t in m.leaves}

    def freed_by_other_model(self, st: State, n: Node, first: Backward, facts: Dict[str, Any],
                             related: List[Related]) -> bool:
        """GW504: the backward that freed ``n`` was another optimizer's (it stepped right after),
        and reached this model only because that model's output entered the other's loss without
        ``.detach()``: point at where it entered."""
        opts: Dict[int, Tuple[int, ...]] = st.meta.get("optimizers", {})
        mine = self.leaves_under(n)
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
            merge = self.merge_node(first.roots, mine, theirs)
            if merge is None:
                continue
            facts = dict(facts, freed_line=first.span.row)
            carried = self.carried_tids(merge, mine)
            where = self.user_call_site(merge, carried)
            # what to detach there: the argument that hands the value over (by its name), or the
            # expression that makes it on that line
            ff: Dict[str, Any] = {"use_span": where}
            arg = self.handed_over(merge, carried, where)
            if arg is not None and arg in st.t:
                info = st.t[arg]
                if info.created is not None and where.row <= info.created.row <= where.end_row:
                    ff["value_span"] = info.created
                elif info.name:
                    facts = dict(facts, name=info.name)
            self.emit(Event("missing_detach_frees", where, facts, tuple(related), fix_facts=ff))
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
        leaves = self.leaves_under(n)
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
        if key in self.analysed_backward:
            return
        self.analysed_backward.add(key)
        found = info.find_method("backward")
        if not found:
            return
        fdef = found[1]
        grads = []
        for i in range(max(1, n_out)):
            g = self.new_tensor(st, rg=False)
            st.update_t(g.tid, grad_output=info.name if danger else None,
                        name="grad_output" if i == 0 else f"grad_output{i}")
            grads.append(g)
        saved_mode = st.grad_enabled
        st.grad_enabled = False
        st.set_attr(ctx.oid, "__in_backward__", ConstV(True))
        exits: List[Tuple[State, Value]] = []
        try:
            exits = self.call_function(fdef, [ctx] + grads, {}, st, span, join=False)
            self.join_exits(st, exits)
        except Exception as exc:  # a Halt inside a backward body is reported, not propagated
            if type(exc).__name__ not in ("Halt",):
                raise
        finally:
            st.grad_enabled = saved_mode
            st.set_attr(ctx.oid, "__in_backward__", ConstV(False))
        self.check_grads_for_non_tensors(info, fdef, ctx, exits, st)

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
                    self.emit(Event("grad_for_non_tensor", self.span_of(elts[i]),
                                    {"fn": info.name, "position": i + 1}))

    # ------------------------------------------------------------------ running totals (GW404)
    def note_accumulation(self, name: str, result: Value, rhs: Value, st: State, stmt: Any) -> None:
        if not st.loop_ctx or not isinstance(result, TensorV) or not isinstance(rhs, TensorV):
            return
        if st.t[rhs.tid].rg is not True:
            return
        key = (stmt.lineno, stmt.col_offset)
        rec = self.accumulations.setdefault(key, {"span": self.span_of(stmt), "name": name, "tids": set()})
        rec["tids"].add(result.tid)

    def finish_path(self, states: Sequence[State]) -> None:
        for key, rec in self.accumulations.items():
            if rec.get("done"):
                continue
            rec["done"] = True
            backwarded = False
            for s in states:
                for tid in rec["tids"]:
                    info = s.t.get(tid)
                    if info is not None and info.grad_fn is not None and info.grad_fn.id in s.freed:
                        backwarded = True
            if not backwarded and not rec.get("backwarded"):
                self.emit(Event("running_total", rec["span"], {"name": rec["name"]}))


# what makes a log-probability, and what keeps one (a REINFORCE term is log_prob * weight)
LOGPROB_MAKERS = frozenset({"log_softmax", "LogSoftmax", "_log_softmax"})
LOGPROB_SELECTORS = frozenset({"gather", "index_select", "take_along_dim", "index"})  # picks the chosen actions
LOGPROB_KEEPERS = frozenset({"squeeze", "unsqueeze", "view", "reshape", "sum", "select", "flatten", "mean", "neg"})

# ops whose forward-mode derivative writes into their output in place (measured, torch 2.13)
JVP_WRITES_OUTPUT = frozenset({"softmax", "log_softmax", "_softmax", "_log_softmax", "Softmax", "LogSoftmax"})


def _may_hide_tensor(v: Value) -> bool:
    """An op argument that is not a tensor the analysis follows but may be one at run time: an
    unknown value (not a number derived from a tensor), or an object attribute never seen set."""
    if isinstance(v, NumberV):
        return False
    return isinstance(v, UnknownV) or isinstance(v, RefV) and v.kind == "omethod"


def _any_rg(rgs: Sequence[Optional[bool]]) -> Optional[bool]:
    if any(r is True for r in rgs):
        return True
    if all(r is False for r in rgs):
        return False
    return None
