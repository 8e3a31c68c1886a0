"""Custom ``torch.autograd.Function``s: ``Fn.apply`` runs ``forward`` with a ``ctx`` (saved
tensors, ``mark_dirty``, ``mark_non_differentiable``), records a node whose backward is the
class's own, and the static checks of the class (legacy non-static API, a backward returning
fewer gradients than forward takes inputs).
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Dict, List, Sequence, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.events import Event
from gradwarden.engine.domain.returncount import ReturnCounter
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.state.model import (
    ConstV, NONE, ObjV, SeqV, State, TRUE, TensorV, UNKNOWN, Value, fresh_id, tensor_value,
)


class CustomFunctions:
    """The ``functions`` role: custom autograd Functions and their ctx."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ================================================================== custom autograd.Function
    def custom_function_view(self, st: State, out: TensorV, fn: str, span: Span) -> None:
        """The output of ``fn.apply`` that is one of its inputs returned as-is while nothing
        required grad (the gradient-flow checks remember it)."""

    def output_marked_nondiff(self, st: State, out: TensorV, where: Span) -> None:
        """A custom Function's output that ``ctx.mark_non_differentiable`` cut from the graph
        (the gradient-flow facts note where)."""

    def input_without_gradient(self, st: State, node: Any, tensors: Sequence[TensorV], where: Span, fn: str) -> None:
        """Inputs requiring grad for which the Function's backward returns ``None`` at every
        ``return`` (they get no gradient from it; the gradient-flow facts note where)."""

    def _none_positions(self, info: Any) -> Dict[int, Span]:
        """The forward inputs (by position) for which every ``return`` of the backward is a tuple
        literal holding the constant ``None`` there, with the last such ``return``."""
        bwd = info.methods.get("backward")
        if bwd is None:
            return {}
        rets = [n for n in _own_nodes(bwd) if isinstance(n, ast.Return)]
        if not rets or not all(isinstance(r.value, ast.Tuple) for r in rets):
            return {}
        width = {len(r.value.elts) for r in rets}  # type: ignore[union-attr]
        if len(width) != 1:
            return {}
        return {i: self.it.span_of(rets[-1]) for i in range(width.pop())
                if all(isinstance(r.value.elts[i], ast.Constant) and r.value.elts[i].value is None  # type: ignore[union-attr]
                       for r in rets)}

    def apply_custom_function(self, info: Any, args: List[Value], kwargs: Dict[str, Value], st: State,
                              span: Span) -> Value:
        self.it.applied_functions.add(info.name)
        found = info.find_method("forward")
        if not found:
            return UNKNOWN
        ctx = ObjV(fresh_id())
        st.set_attr(ctx.oid, "__ctx__", TRUE)
        st.set_attr(ctx.oid, "__saved__", ConstV(()))
        st.set_attr(ctx.oid, "__dirty__", ConstV(()))
        # which forward inputs are not tensors (autograd raises if backward returns a tensor
        # for one): positional arguments only, as apply takes them
        st.set_attr(ctx.oid, "__non_tensor_inputs__",
                    ConstV(tuple(i for i, a in enumerate(args) if isinstance(a, ConstV))))
        outer_mode = st.grad_enabled
        st.grad_enabled = False
        try:
            ret = self.it.calls.call_function(found[1], [ctx] + args, kwargs, st, span)
        finally:
            st.grad_enabled = outer_mode
        inputs = [a for a in args if isinstance(a, TensorV)]
        in_rg = [st.t[a.tid].rg for a in inputs]
        rg = True if any(r is True for r in in_rg) else (None if any(r is None for r in in_rg) else False)
        if not outer_mode or rg is False:
            if rg is False and isinstance(ret, TensorV) and ret.tid in {a.tid for a in inputs} and \
                    ret.tid not in set(st.attrs(ctx.oid)["__dirty__"].value):
                # an input returned as-is is still a view of it, made without grad tracking
                alias = self.it.graph.alias_tensor(st, ret, kind="view", span=span, rg=False, grad_fn=None)
                self.custom_function_view(st, alias, info.name, span)
                return alias
            return ret
        saved_recs = st.attrs(ctx.oid)["__saved__"].value
        stash_seq = st.next_seq()
        stashed = tuple(replace(self.it.graph.saved_rec(st, v, stash_seq), unchecked=True)
                        for k, v in st.attrs(ctx.oid).items()
                        if isinstance(v, TensorV) and not k.startswith("__"))
        saved_recs = tuple(saved_recs) + stashed
        outputs = [ret] if isinstance(ret, TensorV) else (
            [x for x in st.lists.get(ret.lid, ()) if isinstance(x, TensorV)] if isinstance(ret, SeqV) else [])
        # tensors backward reads that are neither inputs nor outputs of forward: a double
        # backward (create_graph=True) treats them as constants
        sites = st.attrs(ctx.oid).get("__kept_at__")
        ends = {st.t[x.tid].counter for x in inputs + outputs if x.tid in st.t}
        middles = tuple(sp for tid, sp in (sites.value if isinstance(sites, ConstV) else ())
                        if tid in st.t and st.t[tid].counter not in ends and st.t[tid].dtype not in ("bool", "int"))
        # `return grad_x, None` for an input that requires grad (a learnable clipping level): autograd
        # accepts it and that input gets no gradient from this node
        shapes = self.it.flow.shapes  # what the backward's gradients must be summable to (GW307)
        st.set_attr(ctx.oid, "__in_shapes__", ConstV(tuple(shapes.get(a.tid) if isinstance(a, TensorV) else None
                                                             for a in args)))
        st.set_attr(ctx.oid, "__out_shapes__", ConstV(tuple(shapes.get(o.tid) for o in outputs)))
        nones = self._none_positions(info)
        dropped = [a for i, a in enumerate(args) if i in nones and isinstance(a, TensorV) and st.t[a.tid].rg is True]
        edges = [a for a in inputs if all(a is not d for d in dropped)]
        node = self.it.graph.make_node(st, f"{info.name}Backward", span, edges, saved_recs, st.next_seq(),
                                       custom=(info, ctx, len(outputs)))
        if dropped:
            self.input_without_gradient(st, node, dropped, nones[max(nones)], info.name)
        if middles:
            self.it.backward.custom_middles[node.id] = (info.name, middles[0])
        dirty = set(st.attrs(ctx.oid)["__dirty__"].value)
        nondiff_v = st.attrs(ctx.oid).get("__nondiff__")
        nondiff = set(nondiff_v.value) if isinstance(nondiff_v, ConstV) else set()
        input_tids = {a.tid for a in inputs}
        input_counters = {st.t[a.tid].counter for a in inputs}
        new_outputs: List[Value] = []
        for out in outputs:
            if out.tid in nondiff:
                # ctx.mark_non_differentiable: no gradient flows back through this output
                where = st.attrs(ctx.oid).get("__nondiff_at__")
                at = where.value if isinstance(where, ConstV) else span
                st.update_t(out.tid, rg=False, grad_fn=None, leaf=True, created=at)
                self.output_marked_nondiff(st, out, at)
                new_outputs.append(out)
                continue
            if out.tid not in input_tids and out.tid not in dirty and st.t[out.tid].counter in input_counters:
                # a view of an input (x.view(...)) made inside forward: autograd forbids writing it
                st.update_t(out.tid, grad_fn=node, rg=rg, leaf=False, custom_out=(info.name, span))
                new_outputs.append(out)
                continue
            if out.tid in input_tids and out.tid not in dirty:
                alias = self.it.graph.alias_tensor(st, out, kind="view", span=span, rg=rg, grad_fn=node)
                st.update_t(alias.tid, custom_out=(info.name, span))
                new_outputs.append(alias)
            else:
                st.update_t(out.tid, grad_fn=node, rg=rg, leaf=False)
                new_outputs.append(out)
        if isinstance(ret, TensorV):
            return new_outputs[0] if new_outputs else ret
        if isinstance(ret, SeqV):
            items = list(st.lists.get(ret.lid, ()))
            it = iter(new_outputs)
            items = [next(it) if isinstance(x, TensorV) else x for x in items]
            return self.it.ev.new_seq(items, st, kind=ret.kind)
        return ret

    def note_kept(self, ctx: ObjV, tensors: Sequence[TensorV], span: Span, st: State) -> None:
        """Where forward kept tensors for backward (save_for_backward, a ctx attribute)."""
        kept = st.attrs(ctx.oid).get("__kept_at__")
        prev = kept.value if isinstance(kept, ConstV) else ()
        st.set_attr(ctx.oid, "__kept_at__", ConstV(prev + tuple((t.tid, span) for t in tensors)))

    def ctx_method(self, ctx: ObjV, name: str, args: List[Value], st: State, node: ast.AST) -> Value:
        if name in ("save_for_backward", "save_for_forward"):
            seq = st.next_seq()
            recs = []
            for a in args:
                for t in self.it.graph.slot_tensors(st, a):
                    recs.append(self.it.graph.saved_rec(st, t, seq))
            st.set_attr(ctx.oid, "__saved__", ConstV(tuple(recs)))
            if name == "save_for_backward":
                self.note_kept(ctx, [t for a in args for t in self.it.graph.slot_tensors(st, a)], self.it.span_of(node), st)
            return NONE
        if name == "mark_non_differentiable":
            tids = tuple(t.tid for a in args for t in self.it.graph.slot_tensors(st, a))
            prev = st.attrs(ctx.oid).get("__nondiff__")
            st.set_attr(ctx.oid, "__nondiff__", ConstV((prev.value if isinstance(prev, ConstV) else ()) + tids))
            st.set_attr(ctx.oid, "__nondiff_at__", ConstV(self.it.span_of(node)))
            return NONE
        if name == "mark_dirty":
            tids = tuple(a.tid for a in args if isinstance(a, TensorV))
            st.set_attr(ctx.oid, "__dirty__", ConstV(st.attrs(ctx.oid)["__dirty__"].value + tids))
            return NONE
        return NONE

    def ctx_saved_tensors(self, ctx: ObjV, st: State) -> Value:
        recs = st.attrs(ctx.oid).get("__saved__")
        items: List[Value] = []
        for r in (recs.value if isinstance(recs, ConstV) else ()):
            if r.tid not in st.t:
                items.append(UNKNOWN)
                continue
            alias = self.it.graph.alias_tensor(st, tensor_value(r.tid), kind="detach", span=None, rg=False, grad_fn=None)
            st.update_t(alias.tid, ctx_saved=True)
            items.append(alias)
        return self.it.ev.new_seq(items, st, kind="tuple")

    def grad_outputs(self, st: State, info: Any, ctx: ObjV, n_out: int, danger: str) -> List[TensorV]:
        """The gradients a backward of this node is handed: one per output of forward, of its shape."""
        outs = st.attrs(ctx.oid).get("__out_shapes__")
        shapes = outs.value if isinstance(outs, ConstV) else ()
        grads = []
        for i in range(max(1, n_out)):
            g = self.it.graph.new_tensor(st, rg=False)
            st.update_t(g.tid, grad_output=info.name if danger else None,
                        name="grad_output" if i == 0 else f"grad_output{i}")
            if i < len(shapes) and shapes[i] is not None:
                self.it.flow.shapes[g.tid] = shapes[i]
            grads.append(g)
        return grads

    def check_grad_shapes(self, info: Any, fdef: Any, ctx: ObjV, exits: Sequence[Any], st: State) -> None:
        """GW307: a gradient the backward returns whose shape, known from the code, is not its input's
        and cannot be summed to it (autograd sums a gradient the input's shape expands to, and raises
        ``returned an invalid gradient at index i`` otherwise: a bias gradient reduced over the wrong
        dimension, a weight gradient returned transposed). Reported where that gradient is computed."""
        ins = st.attrs(ctx.oid).get("__in_shapes__")
        want_all = ins.value if isinstance(ins, ConstV) else ()
        shapes = self.it.flow.shapes
        rets = [n for n in _own_nodes(fdef) if isinstance(n, ast.Return) and n.value is not None]
        for ex_state, ret in exits:
            items = list(ex_state.lists.get(ret.lid, ())) if isinstance(ret, SeqV) else [ret]
            for i, v in enumerate(items):
                if not isinstance(v, TensorV) or i >= len(want_all):
                    continue
                want, got = want_all[i], shapes.get(v.tid)
                if not (_known(want) and _known(got)) or tuple(want) == tuple(got) or _expandable(want, got):
                    continue
                made = ex_state.t[v.tid].created if v.tid in ex_state.t else None
                where = made or (self.it.span_of(rets[0]) if rets else self.it.span_of(fdef))
                self.it.emit(Event("backward_grad_count", where, {
                    "fn": info.name,
                    "problem": f"returns a gradient of shape {list(got)} for its input {i + 1}, of shape {list(want)}, "
                               f"which autograd cannot sum to that shape",
                    "fix": f"`returned an invalid gradient at index {i}`; return a gradient of the input's shape, "
                           f"reduced over the dimensions the forward broadcast"}))

    def check_function_class(self, info: Any) -> None:
        """Static checks of a custom autograd.Function: the legacy (non-static) API, and a
        backward that returns fewer gradients than forward takes inputs."""
        fwd, bwd = info.methods.get("forward"), info.methods.get("backward")
        if fwd is not None and not self.it.is_static(fwd):
            self.it.emit(Event("legacy_function", self.it.span_of(fwd), {"fn": info.name}))
            return
        if fwd is None or bwd is None or fwd.args.vararg is not None or fwd.args.kwarg is not None:
            return
        n_inputs = len(fwd.args.posonlyargs) + len(fwd.args.args) - 1
        n_required = n_inputs - len(fwd.args.defaults)
        # How many values each return gives, read from the code: tuple literals and tuple
        # arithmetic (`(None,) * 3 + Fn.apply(...)`), and calls of the module's functions and
        # classes that return tuples (`Cls._helper(...)`); unknown lengths report nothing.
        counter = ReturnCounter(self.it.tree, info.name, info.methods)
        grads = [a.arg for a in list(bwd.args.posonlyargs) + list(bwd.args.args)][1:]
        for node in _own_nodes(bwd):
            if isinstance(node, ast.Return) and node.value is not None:
                got = counter.count(node.value, grads, within=bwd)
                if got is not None and got < n_required:
                    self.it.emit(Event("backward_grad_count", self.it.span_of(node), {
                        "fn": info.name, "got": got, "want": n_inputs,
                        "problem": f"returns {got} gradient(s) but `forward` takes {n_inputs} input(s)",
                        "fix": "return None for the inputs that need no gradient"}))


def _known(shape: Any) -> bool:
    return isinstance(shape, tuple) and all(isinstance(d, int) and not isinstance(d, bool) for d in shape)


def _expandable(src: Tuple[int, ...], dst: Tuple[int, ...]) -> bool:
    """``src`` expands to ``dst`` (torch's is_expandable_to): a gradient of shape ``dst`` is summed to ``src``."""
    return len(src) <= len(dst) and all(s == d or s == 1 for s, d in zip(reversed(src), reversed(dst)))
