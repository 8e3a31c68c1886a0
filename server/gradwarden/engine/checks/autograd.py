"""The autograd graph over the abstract state: tensors made (``new_tensor``, ``alias_tensor``
for views, detaches and same-object returns), ops that record a node and save tensors
(``apply_op``, from the op table's record), and where in the user's code a node was recorded.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence, Set

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.state.model import (
    Node, NumberV, RefV, Saved, SeqV, State, TInfo, TensorV, UnknownV, Value, fresh_id, make_tinfo, new_tinfo,
    saved_value, tensor_value, view_tinfo, walk_nodes,
)


# what makes a log-probability, and what keeps one (a REINFORCE term is log_prob * weight)
LOGPROB_MAKERS = frozenset({"log_softmax", "LogSoftmax", "_log_softmax"})
LOGPROB_SELECTORS = frozenset({"gather", "index_select", "take_along_dim", "index"})  # picks the chosen actions
LOGPROB_KEEPERS = frozenset({"squeeze", "unsqueeze", "view", "reshape", "sum", "select", "flatten", "mean", "neg"})
# ops joining tensors: log-probabilities of the chosen actions collected step by step and stacked
LOGPROB_JOINERS = frozenset({"stack", "cat", "concat", "concatenate", "hstack", "vstack"})

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


class Graph:
    """The ``graph`` role: tensors and the nodes that record them."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ------------------------------------------------------------------ tensors
    def new_tensor(self, st: State, rg: Optional[bool] = False, node: Any = None, name: str = "",
                   param: bool = False, grad_fn: Optional[Node] = None, dtype: Optional[str] = None,
                   created: Optional[Span] = None) -> TensorV:
        """A new tensor, made at ``node`` (else at the span ``created``, if given). Call it with
        keywords; the flow layer (engine/checks/flowlayers.py) passes them on in this order."""
        tid = fresh_id()
        st.set_t(tid, new_tinfo(tid, tid, rg, grad_fn is None, grad_fn, param, name,
                                self.it.span_of(node) if node is not None else created, st.loop_ctx,
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
        nondiff = info.nondiff_outputs if info is not None else ()  # a tuple of output indices: no set per op
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
        if not kind and first and opname in LOGPROB_JOINERS and all(st.t[t.tid].logprob == first
                                                                     for ts in tensors for t in ts):
            kind = first
        if kind:
            for out in outs[:1]:
                st.update_t(out.tid, logprob=kind)
        elif opname in {"mul", "multiply", "__mul__", "__rmul__"} and node is not None:
            operands = [t for ts in tensors for t in ts]
            self.it.writes.check_policy_weight(st, operands, node, span)
            dist = [t for t in operands if st.t[t.tid].logprob == "dist"]
            if len(operands) == 2 and len(dist) == 1:
                # `-(p_teacher * log_softmax(student)).sum()`: a soft cross-entropy written out
                other = operands[1] if operands[0] is dist[0] else operands[0]
                if not _own_probabilities(st, dist[0], other):
                    self.it.tensors.check_peer_target(dist[0], other, st, span, node)
        if any(t_of[t.tid].dual for ts in tensors for t in ts):
            for out in outs:
                st.update_t(out.tid, dual=True)
            if opname in JVP_WRITES_OUTPUT and outs:
                # softmax's forward-mode derivative (logsumexp_jvp) writes into the result in
                # place inside PyTorch, after its backward saved it (pytorch#162350)
                self.it.writes.do_write(st, outs[0], f"write by the forward-mode derivative of `{opname}` (inside PyTorch)",
                                        span, kind="internal", leaf_check=False, name=f"{opname} output")
        return outs

    def make_node(self, st: State, opname: str, span: Span, inputs: Sequence[TensorV], saved: Sequence[Saved],
                  seq: int, report_span: Optional[Span] = None, call_span: Optional[Span] = None,
                  custom: Any = None, opaque: bool = False) -> Node:
        # (the last four by keyword; the flow layer passes them on in this order)
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
                if g.id in st.freed and stale_site is None and self.it.call_spans:
                    stale_site = self.passed_in_at(st, t.tid)
            elif ti.rg and ti.leaf:
                leaves.append(self.leaf_root(st, t.tid))
            elif ti.rg is None:
                opaque = True
        # positionally, in the order of Node's fields (keyword matching cost as much as the rest
        # of the call; tests/test_engine_model.py checks the order)
        return Node(opname, span, tuple(parents), tuple(leaves), tuple(saved), seq, st.loop_ctx, report_span,
                    call_span, custom, tuple(self.it.call_spans), "", tuple(names), stale_site, tuple(tids), False,
                    tuple(self.it.call_stack), tuple(self.it.call_args), opaque)

    def passed_in_at(self, st: State, tid: int) -> Optional[Span]:
        """The call through which an outer frame's variable holding ``tid`` reached this code.

        A carried-over value that the loop's own code holds in a variable (``hidden``) is
        reported where that variable is passed in; one held only by an object (``self.h``)
        is reported where the callee reads it."""
        for i in range(min(len(st.frames) - 1, len(self.it.call_spans))):
            for v in self.held_in_frame(st, i):
                if isinstance(v, TensorV) and v.tid == tid or isinstance(v, SeqV) and any(
                        isinstance(x, TensorV) and x.tid == tid for x in st.lists.get(v.lid, ())):
                    return self.it.call_spans[i]
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
        here = self.it.call_spans
        p = 0
        while p < len(stack) and p < len(here) and stack[p] == here[p]:
            p += 1
        return stack[p] if len(stack) > p else span

    def optimizer_method_running(self) -> Optional[str]:
        """``Cls.method()`` of the innermost method of a ``torch.optim.Optimizer`` subclass now
        running, if any."""
        for fdef in reversed(self.it.call_stack):
            cls = self.it.class_of_method(fdef)
            if cls is not None and cls.torch_base.startswith("torch.optim."):
                return f"{cls.name}.{fdef.name}()"
        return None

    def in_current_function(self, span: Span) -> bool:
        """Is ``span`` inside the function now running (the module body at top level)?"""
        fdef = self.it.call_stack[-1] if self.it.call_stack else None
        if fdef is None:
            return span.file is None and not any(
                self.in_function(span, d) for d in self.it.tree.body
                if isinstance(d, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
        return self.in_function(span, fdef)

    def in_function(self, span: Span, fdef: Any) -> bool:
        """Is ``span`` inside ``fdef`` (in the file that defines it)?"""
        if span.file != self.it.file_of(fdef):
            return False
        return fdef.lineno <= span.row <= (fdef.end_lineno or fdef.lineno)

    def user_call_site(self, node: Node, carried: Set[int], start: int = 0) -> Span:
        """Where a value (the tensors ``carried``) enters the code that recorded ``node``: going
        down the call stack from the outermost frame, the first call that passes one of those
        tensors as an argument (``cal_gradient_penalty(netD, real, fake)``) or enters a model's
        ``forward`` (``netD(fake)``); the node's own line when the value was read from state at
        every level (``self.netD_patch(self.fake_B)`` inside a trainer's loss method)."""
        spans = list(node.stack) + [node.span]
        first: Optional[Span] = None
        for j, fdef in enumerate(node.defs):  # spans[j] is the call that entered fdef
            if j < start:
                continue
            passed = node.frame_args[j] if j < len(node.frame_args) else frozenset()
            if passed & carried or fdef.name in ("forward", "_forward_impl"):
                if first is None and spans[j].file != self.it.file_of(fdef) and j + 1 < len(node.defs):
                    # a call into a function of another module of the project: the value enters
                    # the code that recorded the node in that module (where its fix goes), if a
                    # call there passes it on (one module deep: that call is the place)
                    first = first or spans[j]
                    continue
                return spans[j]
        return first or node.span

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

    @staticmethod
    def leaves_under(n: Node) -> Set[int]:
        """The leaf tensors (parameters ...) a backward from ``n`` accumulates into."""
        return {t for m in walk_nodes([n]) for t in m.leaves}


def _own_probabilities(st: State, logp: TensorV, p: TensorV) -> bool:
    """``p`` is the distribution ``logp`` is the log of (``logp.exp()``, or ``softmax`` of the tensor
    ``logp`` is the ``log_softmax`` of): ``p * logp`` is an entropy, not a soft target."""
    li, pi = st.t.get(logp.tid), st.t.get(p.tid)
    if li is None or pi is None or li.grad_fn is None or pi.grad_fn is None:
        return False
    ln, pn = li.grad_fn, pi.grad_fn
    if pn.op not in ("exp", "softmax", "Softmax"):
        return False
    if any(i.id == ln.id for i in pn.inputs):
        return True  # `logp.exp()`
    return bool(ln.inputs) and bool(pn.inputs) and ln.inputs[0].id == pn.inputs[0].id  # softmax / log_softmax of one tensor
