"""The gradient-flow layers over the autograd graph (``FlowGraph``, ``FlowWrites``,
``FlowBackwardPass``) and over the interpreter's Python semantics (``FlowExpressions``: numbers
taken from tensors, comparisons; ``FlowStatements``: grad-mode ``with`` regions and loops that
freeze parameters; ``FlowStores``: ``module.requires_grad = ...``). Same contract as
engine/checks/flowtorch.py: observe, record, check.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence

from gradwarden.engine.checks.autograd import Graph
from gradwarden.engine.checks.hookslots import slot_of
from gradwarden.engine.checks.zerograd import ZERO_DERIVATIVE
from gradwarden.engine.checks.backward import BackwardPass
from gradwarden.engine.checks.flowfacts import ShapeV, SizeV
from gradwarden.engine.checks.writes import Writes
from gradwarden.engine.diagnostic import Span
from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.domain.containers import store_into_container
from gradwarden.engine.interp.expressions import Expressions
from gradwarden.engine.interp.statements import Statements
from gradwarden.engine.interp.stores import Stores
from gradwarden.engine.state.model import ConstV, DictV, NumberV, ObjV, RefV, SeqV, State, TensorV, UnknownV, Value


class FlowStatements(Statements):
    """The flow layer over statements: grad-mode `with` regions, loops that freeze parameters."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ------------------------------------------------------------------ grad mode regions
    def stmt_With(self, stmt: ast.With, st: State) -> List[State]:
        self.flow.with_stack.append([self.it.span_of(stmt), False])
        try:
            return super().stmt_With(stmt, st)
        finally:
            self.flow.with_stack.pop()

    def stmt_For(self, stmt: ast.For, st: State) -> List[State]:
        done = self.freeze_loop(stmt, st)
        if done is not None:
            return done
        return super().stmt_For(stmt, st)

    def freeze_loop(self, stmt: ast.For, st: State) -> Optional[List[State]]:
        """A loop that only freezes parameters, run once for all of them (engine/checks/flowviews.py);
        ``for_group`` looks for this shortcut too."""
        return self.it.viewchecks.freeze_loop(stmt, st)


class FlowExpressions(Expressions):
    """The flow layer over expressions: numbers taken from tensors, comparisons
    (cuts, dtypes, shapes), broadcast shapes."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        if isinstance(left, SizeV) and isinstance(op, (ast.Add, ast.Sub)) and isinstance(right, ConstV) \
                and type(right.value) is int:  # `x.size(-1) - 1`: still tied to that dim
            return SizeV(left.tid, left.dim, left.offset + (right.value if isinstance(op, ast.Add) else -right.value))
        if not isinstance(left, TensorV) and not isinstance(right, TensorV) and (
                isinstance(left, NumberV) or isinstance(right, NumberV)):
            if isinstance(left, (NumberV, ConstV)) and isinstance(right, (NumberV, ConstV)):
                cuts = [x.cut for x in (left, right) if isinstance(x, NumberV) and x.cut is not None]
                return NumberV(cuts[0] if cuts else None)
            return super().binop(left, op, right, st, node)
        seq0 = st.seq
        out = super().binop(left, op, right, st, node)
        if self.flow.zeros.exact and isinstance(out, TensorV):
            self.flow.zeros.track(st, type(op).__name__, [left, right], out, node)  # exact zeros (checks/branches.py)
        if self.flow.zeros.zeros and isinstance(op, ast.Mult):
            self.flow.zeros.product(st, [left, right], out, node)  # 0 x -inf of a masked softmax (checks/branches.py)
        if self.flow.zeros.pairs.views and isinstance(out, TensorV):
            self.flow.zeros.pairs.track(st, type(op).__name__, [left, right], {}, out, node)  # checks/zerodiag.py
        if self.flow.reach.sources and isinstance(out, TensorV) and (left.__class__ is NumberV or right.__class__ is NumberV):
            # a number taken from a tensor, combined with the graph (engine/checks/reach.py)
            self.flow.reach.note_operands(st, type(op).__name__.lower(), [left, right], [out], seq0)
        if not self.it.standalone and isinstance(out, TensorV) and out.tid not in self.flow.shapes and (
                isinstance(left, TensorV) or isinstance(right, TensorV)):
            ls = self.flow.shapes.get(left.tid) if isinstance(left, TensorV) else ()
            rs = self.flow.shapes.get(right.tid) if isinstance(right, TensorV) else ()
            if not isinstance(left, (TensorV, ConstV, NumberV)) or not isinstance(right, (TensorV, ConstV, NumberV)):
                return out
            shape = fs.matmul(ls, rs) if isinstance(op, ast.MatMult) else fs.broadcast([ls, rs])
            if shape is not None:
                self.flow.shapes[out.tid] = shape
        return out

    def ex_BinOp(self, node: ast.BinOp, st: State) -> Value:
        for operand in (node.left, node.right):
            if isinstance(operand, ast.Attribute) and operand.attr == "grad":
                operand._gw_arith = True  # type: ignore[attr-defined]  # `w.grad` used in arithmetic
        return super().ex_BinOp(node, st)

    def ex_Compare(self, node: ast.Compare, st: State) -> Value:
        self.flow._cmp_stack.append([])
        try:
            out = super().ex_Compare(node, st)
        finally:
            operands = self.flow._cmp_stack.pop()
        if isinstance(out, TensorV) and out.tid not in self.flow.cuts:
            if any(st.t[t.tid].rg is not False for t in operands if t.tid in st.t):
                self.flow.cuts[out.tid] = c = self.flow._cut_here("nondiff", self.it.span_of(node), "a comparison")
                self.flow.reach.note_cut(st, c, [t for t in operands if t.tid in st.t])  # a hard gate's mask
            else:
                c = self.flow._inputs_cut(st, operands)
                if c is not None:
                    self.flow.cuts[out.tid] = c
            self.flow.dtypes[out.tid] = "bool"
            shape = fs.broadcast([self.flow.shapes.get(t.tid) for t in operands]) if operands else None
            if shape is not None:
                self.flow.shapes[out.tid] = shape
        return out

    def compare(self, a: Value, op: ast.cmpop, b: Value, st: State) -> Optional[bool]:
        if self.flow._cmp_stack:
            self.flow._cmp_stack[-1].extend(x for x in (a, b) if isinstance(x, TensorV))
        return super().compare(a, op, b, st)

    def load_attr(self, obj: Value, attr: str, st: State, node: ast.AST) -> Value:
        if attr == "training" and obj.__class__ is ObjV:
            out = super().load_attr(obj, attr, st, node)
            self.flow.modes.note_training_read(st, obj, out)  # engine/checks/modes.py
            return out
        if self.flow.hooks.stored and obj.__class__ is DictV:
            self.flow.hooks.note_read(obj)  # `acts.items()`, `acts.get(...)`: what a hook kept is read
        if self.flow.hooks.stored and obj.__class__ is ObjV:
            self.flow.hooks.note_read(obj)
            out = super().load_attr(obj, attr, st, node)
            if out.__class__ is DictV:
                self.flow.hooks.note_read(out)
            return out
        if obj.__class__ is NumberV:
            if attr == "backward" and obj.cut is not None:
                self.it.losses.report_number_backward(st, obj, node)  # AttributeError on the attribute itself
            return UnknownV()
        return super().load_attr(obj, attr, st, node)

    def call(self, func: Value, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if (self.flow.zeros.exact or self.flow.zeros.pairs.views) and not isinstance(func, ObjV) and not (isinstance(func, RefV) and (
                func.kind in _MODELLED_CALLS or (func.kind == "builtin" and func.name in _PURE_BUILTINS))) and any(
                isinstance(v, (TensorV, ObjV, SeqV, DictV)) for v in list(args) + list(kwargs.values())):
            self.flow.zeros.exact.clear()  # code the analysis does not see may fill what it is handed
            self.flow.zeros.pairs.forget()
        return super().call(func, args, kwargs, st, node)

    def ex_Dict(self, node: ast.Dict, st: State) -> Value:
        if self.flow.hooks.stored:
            for k, v in zip(node.keys, node.values):
                if k is None and isinstance(v, ast.Name):  # `{**feats}`: a copy of what a hook kept
                    self.flow.hooks.note_read(st.lookup(v.id))
        return super().ex_Dict(node, st)

    def ex_Subscript(self, node: ast.Subscript, st: State) -> Value:
        if isinstance(node.ctx, ast.Load) and not isinstance(node.slice, ast.Slice):
            obj = st.lookup(node.value.id) if isinstance(node.value, ast.Name) else \
                self.eval(node.value, st) if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" else None
            if isinstance(obj, ShapeV):  # `x.shape[-1]` kept in a name: one dim's size
                idx = self.eval(node.slice, st)
                if isinstance(idx, ConstV) and type(idx.value) is int:
                    return SizeV(obj.tid, idx.value)
        if self.flow.hooks.stored and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load):
            held = st.lookup(node.value.id)  # `acts["x"]` of a dict a hook fills: a read
            if held.__class__ is DictV:
                self.flow.hooks.note_read(held)  # type: ignore[arg-type]
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load) and any(
                isinstance(e, ast.Constant) and e.value is None
                for e in (node.slice.elts if isinstance(node.slice, ast.Tuple) else (node.slice,))):
            out = super().ex_Subscript(node, st)  # `a[:, None]`: one side of a pairwise difference (checks/zerodiag.py)
            self.flow.zeros.pairs.note_subscript(st, node, st.lookup(node.value.id), out)
            return out
        return super().ex_Subscript(node, st)

    def known_items(self, it: Value, st: State) -> Optional[List[Value]]:
        if self.flow.hooks.stored and it.__class__ is DictV:
            self.flow.hooks.note_read(it)  # iterating the dict a hook fills
        return super().known_items(it, st)

    def element_of(self, it: Value, st: State) -> Value:
        if isinstance(it, NumberV):
            return NumberV(it.cut)  # an element of `t.tolist()` is a number holding t's values
        return super().element_of(it, st)


# calls whose effect the analysis models (a tensor method, a torch call, the user's own code)
_MODELLED_CALLS = frozenset({"tmethod", "torch", "func", "lambda", "method", "class", "apply", "boundseq"})
_PURE_BUILTINS = frozenset({"print", "len", "isinstance", "range", "zip", "enumerate", "list", "tuple", "dict", "sum",
                            "min", "max", "float", "int", "str", "getattr", "hasattr", "sorted", "any", "all", "super",
                            "type", "iter", "next", "repr", "format", "round", "abs", "bool", "id", "hash", "reversed"})


class FlowStores(Stores):
    """The flow layer over stores: `module.requires_grad = ...` checked."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def store_attr(self, obj: Value, attr: str, value: Value, st: State, target: ast.Attribute,
                   stmt: ast.AST) -> None:
        self.flow.hooks.note_store(st, obj, attr, value, stmt)  # GW721 (engine/checks/hookslots.py)
        if attr == "data" and isinstance(obj, TensorV):
            self.flow.zeros.exact.pop(obj.tid, None)  # `p.data = ...`: new values, no version bump
        if attr == "requires_grad" and isinstance(obj, ObjV) and self.it.modules.is_module_obj(obj, st):
            self.it.training.check_module_requires_grad(st, obj, value, target, stmt)
        super().store_attr(obj, attr, value, st, target, stmt)
        if attr == "training" and isinstance(obj, ObjV) and isinstance(value, ConstV) and type(value.value) is bool \
                and self.it.modules.is_module_obj(obj, st):
            # `m.training = False` (over `model.modules()`): the switch `.train(False)` makes, one module at a
            # time; the mode checks name it as they name the call (engine/checks/modes.py)
            self.it.modules.note_mode_switch(obj, value.value, stmt, st, [("", obj)])


    def assign(self, target: ast.expr, value: Value, st: State, stmt: ast.AST) -> None:
        if self.flow.hooks.stored and isinstance(target, ast.Name) and isinstance(stmt, ast.Assign) \
                and isinstance(stmt.value, (ast.Name, ast.Attribute)):
            self.flow.hooks.note_alias(value, stmt)  # `fake = feats`: a second name, not a copy
        super().assign(target, value, st, stmt)

    def unpack(self, value: Value, n: int, st: State) -> List[Value]:
        if isinstance(value, ShapeV):  # `b, c, t = x.shape`: each the size of its dim
            return [SizeV(value.tid, i) for i in range(n)]
        if value.__class__ is NumberV:
            # `b, c, h, w = x.shape` of a shape not known: numbers all the same (never tensors)
            return [NumberV(value.cut) for _ in range(n)]  # type: ignore[attr-defined]
        return super().unpack(value, n, st)

    def store_item(self, obj: Value, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        if obj.__class__ is DictV and getattr(self.it, "hook_depth", 0):
            slot = slot_of(self.it, target, st)
            if slot is not None:
                self.flow.hooks.note_store(st, obj, slot, value, stmt)  # GW721
        if obj.__class__ is ObjV and store_into_container(self.it, obj, self.it.ev.eval(target.slice, st),  # type: ignore[arg-type]
                                                          value, st):
            # `self.bias[domain] = nn.Parameter(...)`: a child of the container (domain/containers.py)
            if value.__class__ is TensorV and value.tid in st.t and not st.t[value.tid].name:  # type: ignore[attr-defined]
                st.update_t(value.tid, name=ast.unparse(target))  # type: ignore[attr-defined]
            return
        super().store_item(obj, target, value, st, stmt)


class FlowGraph(Graph):
    """The flow layer over the graph: cuts of op outputs, views under no_grad,
    inference tensors, open nodes."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ================================================================== wrapped semantics
    def unknown_tensor(self, st: State, name: str, rg: Optional[bool] = None) -> TensorV:
        t = super().unknown_tensor(st, name, rg)
        self.flow.unknown_derived.add(t.tid)
        return t

    def apply_op(self, st: State, info: Any, slots: Sequence[Value], span: Span, opname: str, **kw: Any) -> List[TensorV]:
        seq0 = st.seq
        outs = super().apply_op(st, info, slots, span, opname, **kw)
        if self.flow.modes.eval_frames and outs and opname.rstrip("_") in ZERO_DERIVATIVE:
            mode = self.flow.modes.current()
            oi = st.t.get(outs[0].tid)
            if mode is not None and oi is not None and oi.grad_fn is not None:
                self.flow.modes.sites[oi.grad_fn.id] = mode  # GW718 at the mode switch
        if self.flow.reach.sources:
            self.flow.reach.note_operands(st, opname, slots, outs, seq0)
        ins: List[TensorV] = []
        for v in slots:
            if v.__class__ is TensorV:
                ins.append(v)  # type: ignore[arg-type]
            else:
                ins.extend(self.slot_tensors(st, v))
        derived = self.flow.unknown_derived
        if derived:
            for t in ins:
                if t.tid in derived:
                    derived.update(o.tid for o in outs)
                    break
        hidden: Optional[bool] = None
        for k, o in enumerate(outs):
            oi = st.t.get(o.tid)
            if oi is None or oi.rg is not False or o.tid in self.flow.cuts:
                continue
            if hidden is None:
                # an operand we cannot see may carry a graph; no tensor operand at all (an op
                # over a list the analysis believes empty) says nothing either: unknown
                hidden = not ins or any(self.flow._hides_tensor(v, st) for v in slots)
            if hidden:
                return outs
            if not st.grad_enabled:
                self.flow.cuts[o.tid] = c = self.flow._nograd_cut(st, ins, span)
                self.flow.reach.note_cut(st, c, ins)
                continue
            nondiff = info is not None and (not info.differentiable or k in info.nondiff_outputs)
            if nondiff and any(st.t[t.tid].rg is not False for t in ins if t.tid in st.t):
                self.flow.cuts[o.tid] = c = self.flow._cut_here("nondiff", span, f"`{opname}`")
                # indices or a mask (`one_hot(router(x).argmax(-1))`): a parameter reached only through
                # them never gets a gradient; with a mode switch, an eval-mode branch's argmax
                self.flow.reach.note_cut(st, c, ins, config=self.flow.modes.current())
                continue
            c = self.flow._inputs_cut(st, ins)
            if c is not None:
                self.flow.cuts[o.tid] = c
        return outs

    def alias_tensor(self, st: State, src: TensorV, *, kind: str, span: Optional[Span], rg: Optional[bool],
                     grad_fn: Any, opname: str = "") -> TensorV:
        out = super().alias_tensor(st, src, kind=kind, span=span, rg=rg, grad_fn=grad_fn,
                                   opname=opname)
        if out.tid == src.tid:
            return out
        if src.tid in self.flow.inference:
            self.flow.inference[out.tid] = self.flow.inference[src.tid]  # a view of an inference tensor is one too
        si = st.t.get(src.tid)
        if si is None:
            return out
        if src.tid in self.flow.unknown_derived:
            self.flow.unknown_derived.add(out.tid)
            return out  # a view of something unknown (maybe not even a tensor): no facts
        if kind == "detach":
            if si.rg is False:
                c = self.flow.cuts.get(src.tid)
                if c is not None:
                    self.flow.cuts[out.tid] = c
            else:
                self.flow.cuts[out.tid] = c = self.flow._cut_here("detach", span, "`.detach()`")
                self.flow.reach.note_cut(st, c, [src])
            if src.tid in self.flow.shapes:
                self.flow.shapes[out.tid] = self.flow.shapes[src.tid]
            return out
        oi = st.t.get(out.tid)
        if oi is not None and oi.rg is False:
            if not st.grad_enabled and si.rg is not False:
                self.flow.cuts[out.tid] = c = self.flow._nograd_cut(st, [src], span)
                self.flow.reach.note_cut(st, c, [src])
            elif src.tid in self.flow.cuts and si.rg is False:
                self.flow.cuts[out.tid] = self.flow.cuts[src.tid]
        if src.tid in self.flow.dtypes:
            self.flow.dtypes[out.tid] = self.flow.dtypes[src.tid]
        view_kind = kind in ("view", "multi_view", "expand")
        if view_kind or kind == "may_alias":
            self.flow.views[out.tid] = view_kind
            if not st.grad_enabled and si.rg is not None and span is not None:
                # only where the user disabled grad: inside a custom Function's forward the
                # view is a custom-Function view instead (GW305)
                region = self.flow._region(st)
                if region is not None and src.tid in self.flow.nograd_views:
                    # a view of a view made under no_grad (`x.view(...).transpose(1, 2)`): the base is the first's
                    vs, sure, base_rg, what = self.flow.nograd_views[src.tid]
                    self.flow.nograd_views[out.tid] = (vs, sure and view_kind, base_rg, what)
                elif region is not None:
                    self.flow.nograd_views[out.tid] = (span, view_kind, si.rg is True, "")
            elif src.tid in self.flow.nograd_views:
                vs, sure, base_rg, what = self.flow.nograd_views[src.tid]
                self.flow.nograd_views[out.tid] = (vs, sure and view_kind, base_rg, what)
            if src.tid in self.flow.unfold_views and view_kind:
                self.flow.unfold_views[out.tid] = self.flow.unfold_views[src.tid]
        return out

    def new_tensor(self, st: State, *, rg: Optional[bool] = False, node: Any = None, name: str = "",
                   param: bool = False, grad_fn: Any = None, dtype: Optional[str] = None,
                   created: Optional[Span] = None) -> TensorV:
        t = super().new_tensor(st, rg, node, name, param, grad_fn, dtype, created)
        if param and self.it.call_stack:
            self.flow.reach.unheld.note_param(t.tid)  # made inside a constructor: where the module is made
        if not st.grad_enabled and self.flow.mentions_inference:
            region = self.flow._inference_region(st)
            if region is not None:
                self.flow.inference[t.tid] = region
        return t

    def make_node(self, st: State, opname: str, span: Span, inputs: Sequence[TensorV], saved: Any, seq: int, *,
                  report_span: Optional[Span] = None, call_span: Optional[Span] = None, custom: Any = None,
                  opaque: bool = False) -> Any:
        if self.flow.inference and st.grad_enabled and not self.flow.inference_reported:
            self.it.training.check_inference_saved(st, opname, span, inputs, saved)
        node = super().make_node(st, opname, span, inputs, saved, seq, report_span, call_span,
                                 custom, opaque)
        open_nodes = self.flow.open_nodes
        t_of = st.t
        for t in inputs:
            ti = t_of.get(t.tid)
            if ti is None:
                continue
            if t.tid in self.flow.fake_leaves or (ti.grad_fn is None and (ti.rg is None or (ti.rg and not ti.leaf))):
                open_nodes.add(node.id)
                return node
        if open_nodes:
            for p in node.inputs:
                if p.id in open_nodes:
                    open_nodes.add(node.id)
                    break
        return node


class FlowWrites(Writes):
    """The flow layer over writes: views made under no_grad and overlapping
    writes, checked first."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ------------------------------------------------------------------ writes and loops (flowviews.py)
    def do_write(self, st: State, target: TensorV, opname: str, span: Span, **kw: Any) -> str:
        others = kw.pop("others", ())
        if kw.get("kind", "user") in ("user", "module"):
            self.it.viewchecks.check_write(st, target, opname, span, kw.get("site"), kw.get("name", ""), others)
        return super().do_write(st, target, opname, span, **kw)


class FlowBackwardPass(BackwardPass):
    """The flow layer over backward: a `.to(device)` that may return the
    leaf itself is not a stale copy."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def do_backward(self, st: State, roots: Sequence[Value], span: Span, *, retain: bool, accumulate: bool = True,
                    implicit: bool = False, inputs: Sequence[Value] = (), user_grad: bool = False) -> List[Any]:
        order = super().do_backward(st, roots, span, retain=retain, accumulate=accumulate, implicit=implicit,
                                    inputs=inputs, user_grad=user_grad)
        if accumulate and not implicit:
            self.flow.reach.after_backward(st, roots, order, span)  # engine/checks/reach.py
            self.flow.samples.after_backward(order, span)  # engine/checks/samples.py
        return order

    def on_raising_backward(self, st: State, order: Sequence[Any]) -> None:
        self.flow.reach.note_raising_backward(order)  # engine/checks/reach.py

    def check_stale_retained(self, st: State, order: Sequence[Any], span: Span) -> None:
        # `.to(device)` that may return the leaf itself: its copy node exists only if it copied,
        # and then the in-place update hits the copy, not the leaf the node was recorded from
        maybe_nodes = {id(st.t[tid].grad_fn) for tid in self.flow.maybe_leaf if tid in st.t and st.t[tid].grad_fn}
        super().check_stale_retained(st, [m for m in order if id(m) not in maybe_nodes], span)
