"""What tensor methods, attributes, indexing and Python operators on tensors do: the op table's
record for a method (saves, aliases, in place), views, copies, dtype conversions, ``.data``,
``.grad``, slice assignment, and the checks on regression and distillation targets.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence

from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.domain import optable
from gradwarden.engine.domain.torchsem import ARITHMETIC, WRAPS_NUMBER, _RESULT_DTYPE, arg_kind, operand_kind
from gradwarden.engine.events import Event
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    ConstV, NONE, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, Value, Write, fresh_id, make_tinfo, ref_value,
    tensor_value, walk_nodes,
)


NUMBER_METHODS = {"item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "stride",
                  "data_ptr", "is_contiguous", "element_size", "__len__", "get_device", "storage_offset",
                  "is_floating_point", "is_complex", "untyped_storage", "storage", "equal", "any_", "__repr__",
                  "__format__", "__bool__", "__float__", "__int__", "is_set_to", "has_names", "type"}
NOT_TENSOR_METHODS = {"items", "keys", "values", "get", "append", "extend", "update", "setdefault", "insert",
                      "popitem", "index", "count", "startswith", "endswith", "split_", "format", "strip"}
_NO_RESULT = frozenset({"retain_grad", "register_hook", "share_memory_", "pin_memory", "record_stream"})
_NEW_FACTORIES = frozenset({"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new", "new_empty_strided"})
_SPLITS = frozenset({"split", "chunk", "unbind", "tensor_split", "split_with_sizes", "hsplit", "vsplit", "unflatten_"})
_FLOAT_CASTS = frozenset({"float", "double", "half", "bfloat16"})
_MOVES_OR_CASTS = frozenset({"float", "double", "half", "bfloat16", "to", "cuda", "cpu", "type_as", "contiguous", "type"})
_NOT_DIFFERENTIABLE = frozenset({"long", "int", "bool", "byte", "short", "char", "argmax", "argmin", "argsort", "nonzero",
                                 "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "sign", "round",
                                 "floor", "ceil", "trunc"})
# every name `Tensors._call_tensor_method` tests before its general path (an op-table look-up):
# any other name goes there at once, past the tests (most method calls: view, sum, permute...)
_BEFORE_GENERAL = frozenset({"backward", "detach", "detach_", "requires_grad_", "type_as", "to", "clone"}) | \
    NUMBER_METHODS | NOT_TENSOR_METHODS | _NO_RESULT | _NEW_FACTORIES | _SPLITS | _FLOAT_CASTS | _MOVES_OR_CASTS | \
    _NOT_DIFFERENTIABLE
LAYOUT_VIEWS = {"transpose", "permute", "t", "T", "mT", "mH", "H", "swapaxes", "swapdims", "movedim", "flip",
                "transpose_", "adjoint"}
BINOP_METHOD = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul",
                ast.Pow: "pow", ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.BitAnd: "bitwise_and",
                ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "bitwise_left_shift",
                ast.RShift: "bitwise_right_shift"}
INPLACE_METHOD = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_", ast.Pow: "pow_",
                  ast.FloorDiv: "floor_divide_", ast.Mod: "remainder_", ast.BitAnd: "bitwise_and_",
                  ast.BitOr: "bitwise_or_", ast.BitXor: "bitwise_xor_", ast.LShift: "bitwise_left_shift_",
                  ast.RShift: "bitwise_right_shift_"}

_OPSYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.FloorDiv: "//", ast.Mod: "%",
          ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}


class Tensors:
    """The ``tensors`` role: tensor methods, attributes, indexing and operators."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ================================================================== tensor methods
    def call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        out = self._call_tensor_method(t, name, args, kwargs, st, node, fn_name)
        if name in WRAPS_NUMBER:
            self.it.torch.note_wrapped_number(out, args, kwargs, st)
        return out

    def _call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        span = self.it.span_of(node)
        info_t = st.t.get(t.tid)
        if info_t is None:
            return UNKNOWN
        if name in _BEFORE_GENERAL:  # the special methods' chain of tests, skipped by every other name
            if name == "backward":
                retain = kwargs.get("retain_graph", args[1] if len(args) > 1 else None)
                create = kwargs.get("create_graph", args[2] if len(args) > 2 else None)
                create_b = isinstance(create, ConstV) and create.value is True
                retain_b = create_b if retain is None else self.it.ev.truth_of(retain) is not False
                inputs = kwargs.get("inputs", args[3] if len(args) > 3 else None)
                self.it.backward.do_backward(st, [t], span, retain=retain_b,
                                             inputs=[inputs] if isinstance(inputs, (TensorV, SeqV)) else ())
                return NONE
            if name in NUMBER_METHODS and not (name == "type" and args):
                return UNKNOWN
            if name in NOT_TENSOR_METHODS:
                return UNKNOWN  # `.items()`: an opaque call's result that is a dict, not a tensor
            if name == "detach":
                return self.it.graph.alias_tensor(st, t, kind="detach", span=span, rg=False, grad_fn=None)
            if name == "detach_":
                st.update_t(t.tid, rg=False, leaf=True, grad_fn=None, base=None)
                return t
            if name == "requires_grad_":
                flag = args[0] if args else kwargs.get("requires_grad", TRUE)
                b = self.it.ev.truth_of(flag)
                if info_t.leaf or info_t.grad_fn is None:
                    st.update_t(t.tid, rg=b if b is not None else None, leaf=True)
                return t
            if name in _NO_RESULT:
                if name == "register_hook" and info_t.param and args:  # GW742: a hook that returns zeros
                    self.it.optim.zeroed.at_register_hook(self.receiver_text(node) or "the parameter",
                                                          args[0], node)
                return NONE if name != "pin_memory" else t
            if name in _NEW_FACTORIES:
                rg = kwargs.get("requires_grad")
                return self.it.graph.new_tensor(st, rg=True if isinstance(rg, ConstV) and rg.value is True else False, node=node)
            if name in _SPLITS:
                kinds = [arg_kind(st, a) for a in args]
                info = optable.lookup_method(name, kinds, kwargs.keys())
                diff = info.differentiable if info is not None else True
                rg = info_t.rg if st.grad_enabled and diff else False
                grad_fn = None
                if rg is not False:
                    grad_fn = self.it.graph.make_node(st, name, span, [t], (), st.next_seq())
                view = self.it.graph.alias_tensor(st, t, kind="multi_view", span=span, rg=rg, grad_fn=grad_fn, opname=name)
                return self.it.ev.new_seq([view], st, kind="homogeneous")
            if name in ("type_as", "to") and args and isinstance(args[0], TensorV) and args[0].tid in st.t:
                other = st.t[args[0].tid].dtype
                if other is not None and info_t.dtype is not None and other != info_t.dtype:
                    out = self._copy_of(t, st, node, name)  # a dtype conversion (bool mask -> float): a copy
                    st.update_t(out.tid, dtype=other)
                    return out
            if name in _FLOAT_CASTS and info_t.dtype in ("bool", "int"):
                out = self._copy_of(t, st, node, name)
                st.update_t(out.tid, dtype="float")
                return out
            if name in _MOVES_OR_CASTS and not self._dtype_change(name, args, kwargs):
                if name == "contiguous" and info_t.expanded is not None:
                    return self._copy_of(t, st, node, name)  # an expanded tensor is not contiguous: a copy
                if name in {"to", "cuda", "cpu", "double", "half", "bfloat16", "type_as", "type"} and \
                        info_t.rg is True and info_t.grad_fn is None:
                    # a leaf moved to another device or dtype is a new, non-leaf tensor; on the same
                    # one it is the leaf itself: we cannot tell, so it is neither for our rules
                    out = self._copy_of(t, st, node, name)
                    st.update_t(out.tid, counter=info_t.counter, storage=info_t.storage)
                    return out
                return t  # may return the very same tensor object: shares everything
            if name in _NOT_DIFFERENTIABLE and not name.endswith("_"):
                kinds = [arg_kind(st, a) for a in args]
                info = optable.lookup_method(name, kinds, kwargs.keys())
                if info is None or not info.differentiable:
                    return self.it.graph.new_tensor(st, rg=False, node=node, dtype=_RESULT_DTYPE.get(name))
            if name == "clone":
                return self._copy_of(t, st, node, name)
        kinds = [(operand_kind if name in ARITHMETIC else arg_kind)(st, a) for a in args]
        info = optable.lookup_method(name, kinds, kwargs.keys())
        inplace = (name.endswith("_") and not name.endswith("__")) or (info is not None and 0 in info.mutates)
        opname = (fn_name.rsplit(".", 1)[-1] if fn_name else "") or name
        if inplace:
            others = [a for a in args if isinstance(a, TensorV) or arg_kind(st, a) == "L"]
            others += [v for v in kwargs.values() if isinstance(v, TensorV)]
            label = f"{opname}(inplace=True)" if fn_name else f".{name}()"
            return self.inplace_op(t, info, others, st, node, label)
        slots: List[Value] = [t] + [a for a in args if isinstance(a, TensorV) or arg_kind(st, a) == "L"]
        slots += [v for v in kwargs.values() if isinstance(v, TensorV)]
        if name in {"expand", "expand_as", "broadcast_to"} and (info is None or info.alias is None):
            return self.it.graph.alias_tensor(st, t, kind="expand", span=span, rg=info_t.rg if st.grad_enabled else False,
                                              grad_fn=self.it.graph.make_node(st, name, span, [t], (), st.next_seq())
                                              if st.grad_enabled and info_t.rg is not False else None)
        if info is None:
            if name.startswith("__") or name in ("apply_", "map_"):
                return UNKNOWN
            outs = self.it.graph.apply_op(st, None, slots, span, name)
            return outs[0]
        outs = self.it.graph.apply_op(st, info, slots, span, name)
        if len(outs) == 1:
            return outs[0]
        return self.it.ev.new_seq(list(outs), st, kind="tuple")

    def _copy_of(self, t: TensorV, st: State, node: ast.AST, name: str) -> TensorV:
        info_t = st.t[t.tid]
        rg = info_t.rg if st.grad_enabled else False
        grad_fn = self.it.graph.make_node(st, name, self.it.span_of(node), [t], (), st.next_seq()) if rg is not False else None
        out = self.it.graph.new_tensor(st, rg=rg, grad_fn=grad_fn, node=node)
        st.update_t(out.tid, leaf=grad_fn is None, name=info_t.name)
        return out

    @staticmethod
    def _dtype_change(name: str, args: List[Value], kwargs: Dict[str, Value]) -> bool:
        if name == "type" and not args:
            return False
        if name in ("to", "type"):
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, RefV) and a.kind == "torch" and a.name.split(".")[-1] in (
                        "long", "int", "int64", "int32", "bool", "uint8", "int8", "int16", "short"):
                    return True
        return False

    def inplace_op(self, target: TensorV, info: Any, others: Sequence[Value], st: State, node: ast.AST,
                   label: str, *, kind: str = "user", site: Optional[Span] = None) -> Value:
        span = self.it.span_of(node)
        stmt_span = span
        fix_facts = {"stmt_span": stmt_span, "target_text": self.receiver_text(node), "op": label,
                     "call_span": span, "form": "method"}
        self.it.writes.do_write(st, target, label, span, kind=kind, site=site, fix_facts=fix_facts,
                                name=self.receiver_text(node) or "", others=others)
        opname = label.split("(")[0] + "_" if "(inplace" in label else label.strip(".()")
        self.it.writes.inplace_autograd(st, target, info, others, span, opname,
                                        report_span=site, call_span=span if site else None)
        return target

    def receiver_text(self, node: ast.AST) -> str:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not isinstance(
                self.eval_quiet(node.func.value), RefV):
            return self.it.text_of(node.func.value)
        if isinstance(node, ast.Call) and node.args:
            return self.it.text_of(node.args[0])
        if isinstance(node, ast.AugAssign):
            return self.it.text_of(node.target)
        return ""

    # ================================================================== attributes & indexing
    def eval_quiet(self, node: ast.AST) -> Value:
        """Is this receiver a module path (``F``, ``torch.nn.functional``)? Names only, no effects."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ("torch", "F", "nn", "th", "functional"):
            return ref_value("torch", root.id)
        return UNKNOWN

    def tensor_getattr(self, t: TensorV, attr: str, st: State, node: ast.AST) -> Value:
        info = st.t[t.tid]
        if attr == "data":
            tid = fresh_id()
            st.set_t(tid, make_tinfo(counter=tid, storage=info.storage, rg=False, leaf=True, data_alias=True, alias_of=t.tid,
                                     name=f"{info.name}.data" if info.name else "data", created=self.it.span_of(node),
                                     loop_ctx=st.loop_ctx, expanded=info.expanded))
            return tensor_value(tid)
        if attr == "grad":
            g = self.it.graph.new_tensor(st, rg=False, node=node)
            st.update_t(g.tid, grad_site=True, name=f"{info.name}.grad" if info.name else "grad")
            return g
        if attr in {"T", "mT", "H", "mH", "real", "imag"}:
            grad_fn = None
            rg = info.rg if st.grad_enabled else False
            if rg is not False:
                grad_fn = self.it.graph.make_node(st, attr, self.it.span_of(node), [t], (), st.next_seq())
            return self.it.graph.alias_tensor(st, t, kind="view", span=self.it.span_of(node), rg=rg, grad_fn=grad_fn)
        if attr == "requires_grad":
            return UNKNOWN if info.rg is None else ConstV(info.rg)
        if attr == "is_leaf":
            return ConstV(info.grad_fn is None)
        if attr in {"shape", "device", "dtype", "ndim", "grad_fn", "layout", "names", "is_cuda"}:
            return UNKNOWN
        return ref_value("tmethod", attr, None, t)

    def tensor_setattr(self, t: TensorV, attr: str, value: Value, st: State, target: ast.Attribute,
                       stmt: ast.AST) -> None:
        info = st.t[t.tid]
        if attr == "requires_grad":
            b = self.it.ev.truth_of(value)
            if info.grad_fn is None:
                st.update_t(t.tid, rg=b, leaf=True)
        elif attr == "data" and isinstance(value, TensorV):
            vinfo = st.t[value.tid]
            if vinfo.expanded is not None and (info.param or info.rg):
                rhs = stmt.value if isinstance(stmt, ast.Assign) else None
                self.it.emit(Event("expanded_param_data", self.it.span_of(stmt), {"name": self.it.text_of(target.value)},
                                   related=(Related(vinfo.expanded, "expanded here", "created"),),
                                   fix_facts={"rhs_span": self.it.span_of(rhs) if rhs is not None else None}))
            if info.storage != vinfo.storage:
                # `w.data = new`: whoever saved `w` itself reads the new data in backward,
                # without a version bump (a pruning schedule applied before loss.backward())
                seq = st.next_seq()
                w = Write(counter=info.counter, storage=info.storage, version_after=st.version(info.counter),
                          seq=seq, span=self.it.span_of(stmt), op="`.data =` reassignment", kind="data_assign",
                          name=self.it.text_of(target.value), tid=t.tid)
                dw = st.own("data_writes")
                dw[info.storage] = dw.get(info.storage, ()) + (w,)
            st.update_t(t.tid, storage=vinfo.storage)
        elif attr == "grad":
            grads = st.own("grads")
            grads.pop(t.tid, None)

    def index_is_advanced(self, sl: ast.expr, st: State) -> bool:
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for p in parts:
            if isinstance(p, (ast.Slice, ast.Constant)) or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)):
                continue
            if isinstance(p, ast.Name) and p.id in ("None", "Ellipsis"):
                continue
            v = self.it.ev.eval(p, st)
            if isinstance(v, (TensorV, SeqV)):
                return True
        return False

    @staticmethod
    def index_is_single(sl: ast.expr) -> bool:
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for p in parts:
            if isinstance(p, ast.Constant) and isinstance(p.value, int):
                continue
            if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
                continue
            return False
        return True

    def expanded_write_silent(self, t: TensorV, sl: ast.expr, st: State) -> bool:
        """Does ``t[sl] = v`` write through integer indices only, so that writing into an
        expanded ``t`` does not raise (every broadcast copy silently changes)? The broadcast
        dims, where the code tells them (``indexed_write_is_silent``), decide; else integer
        literals do."""
        known = self.indexed_write_is_silent(t, sl, st)
        return self.index_is_single(sl) if known is None else known

    def indexed_write_is_silent(self, t: TensorV, sl: ast.expr, st: State) -> Optional[bool]:
        return None  # the broadcast dims are tracked by the flow layer (engine/checks/flowviews.py)

    def tensor_getitem(self, t: TensorV, sub: Optional[ast.Subscript], st: State, node: Optional[ast.AST]) -> Value:
        info = st.t[t.tid]
        span = self.it.span_of(node) if node is not None else (info.created or Span(1, 1, 1, 1))
        rg = info.rg if st.grad_enabled else False
        advanced = sub is not None and self.index_is_advanced(sub.slice, st)
        grad_fn = self.it.graph.make_node(st, "index" if advanced else "select", span, [t], (), st.next_seq()) \
            if rg is not False else None
        if advanced and grad_fn is not None:
            grad_fn.holds = True  # IndexBackward keeps the index tensors: freed by a backward
        if advanced:
            out = self.it.graph.new_tensor(st, rg=rg, grad_fn=grad_fn, node=node)
            st.update_t(out.tid, leaf=grad_fn is None, logprob="action" if info.logprob else "")
            return out
        out = self.it.graph.alias_tensor(st, t, kind="view", span=span, rg=rg, grad_fn=grad_fn)
        if info.logprob == "dist" and sub is not None:
            st.update_t(out.tid, logprob="action")  # `log_probs[:, a]`: the chosen action's
        return out

    def tensor_setitem(self, t: TensorV, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        span = self.it.span_of(stmt)
        self.index_is_advanced(target.slice, st)
        name = self.it.text_of(target.value)
        if isinstance(value, TensorV) and isinstance(stmt, ast.Assign) and self.overlapping_rhs(target, stmt.value):
            vi, ti = st.t[value.tid], st.t[t.tid]
            if vi.storage == ti.storage:
                self.it.emit(Event("overlapping_assign", span, {
                    "name": name, "desc": f"the right-hand side is a view of `{name}` itself; the copy overlaps "
                                          "its own destination and raises"},
                                   fix_facts={"rhs_span": self.it.span_of(stmt.value)}))
                raise Halt()
        fix_facts = {"stmt_span": span, "target_text": name, "op": "slice assignment", "form": "setitem",
                     "indent_row": span.row}
        self.it.writes.do_write(st, t, "slice assignment" if not isinstance(stmt, ast.AugAssign) else "augmented assignment",
                                span, name=name, single_element=self.expanded_write_silent(t, target.slice, st),
                                fix_facts=fix_facts, others=(value,))
        self.it.writes.inplace_autograd(st, t, None, [value] if isinstance(value, TensorV) else [], span, "setitem")

    def overlapping_rhs(self, target: ast.Subscript, rhs: ast.expr) -> bool:
        """``x[i] = x[i].transpose(...)``: the source is a re-laid-out view of the destination."""
        cur = rhs
        saw_layout = False
        while True:
            if isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute):
                if cur.func.attr in ("clone", "contiguous", "copy", "detach_", "to", "float", "numpy"):
                    return False
                saw_layout |= cur.func.attr in LAYOUT_VIEWS
                cur = cur.func.value
            elif isinstance(cur, ast.Attribute):
                saw_layout |= cur.attr in LAYOUT_VIEWS
                cur = cur.value
            else:
                break
        return saw_layout and isinstance(cur, ast.Subscript) and \
            ast.dump(cur.value) == ast.dump(target.value) and ast.dump(cur.slice) == ast.dump(target.slice)

    # ================================================================== arithmetic
    def tensor_binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        name = BINOP_METHOD.get(type(op))
        if name is None:
            return UNKNOWN
        if isinstance(left, TensorV):
            if name == "sub" and right.__class__ is TensorV:
                self.check_anchor_alias(left, right, st, node)  # type: ignore[arg-type]
            return self.call_tensor_method(left, name, [right], {}, st, node)
        if isinstance(right, TensorV):
            if name in {"add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor"}:
                return self.call_tensor_method(right, name, [left], {}, st, node)
            rname = {"sub": "__rsub__", "div": "__rtruediv__", "pow": "__rpow__", "matmul": "__rmatmul__",
                     "floor_divide": "__rfloordiv__", "remainder": "__rmod__"}.get(name, name)
            kinds = [operand_kind(st, left)]
            info = optable.lookup_method(rname, kinds)
            span = self.it.span_of(node)
            if info is None:
                info = optable.lookup_function("torch." + name, [operand_kind(st, left), "T"])
                outs = self.it.graph.apply_op(st, info, [right] if not isinstance(left, TensorV) else [left, right], span,
                                              name) if info is not None and info.slots[:1] == ("other",) else \
                    self.it.graph.apply_op(st, None, [right], span, name)
                return outs[0]
            return self.it.graph.apply_op(st, info, [right], span, name)[0]
        return UNKNOWN

    def tensor_inplace_binop(self, cur: TensorV, op: ast.operator, rhs: Value, st: State, stmt: ast.AugAssign) -> None:
        name = INPLACE_METHOD.get(type(op))
        span = self.it.span_of(stmt)
        if name is None:  # e.g. @= : Python falls back to x = x @ y
            res = self.tensor_binop(cur, op, rhs, st, stmt)
            self.it.stores.assign(stmt.target, res, st, stmt)
            return
        kinds = [operand_kind(st, rhs)]
        info = optable.lookup_method(name, kinds)
        target_text = self.it.text_of(stmt.target)
        fix_facts = {"stmt_span": span, "target_text": target_text, "op": f"`{target_text} {_OPSYM.get(type(op), '?')}= ...`",
                     "form": "augassign", "binop": _OPSYM.get(type(op), "+")}
        label = f"`{_OPSYM.get(type(op), '?')}=`"
        self.it.writes.do_write(st, cur, label, span, name=target_text, fix_facts=fix_facts,
                                single_element=isinstance(stmt.target, ast.Subscript) and
                                self.expanded_write_silent(cur, stmt.target.slice, st),
                                others=(rhs,))
        others = [rhs] if isinstance(rhs, TensorV) else []
        self.it.writes.inplace_autograd(st, cur, info, others, span, name)

    def check_anchor_alias(self, param: TensorV, anchor: TensorV, st: State, node: ast.AST) -> None:
        """GW603: ``p - anchor`` where the anchor is ``p.data`` (or ``p.detach()``) taken earlier and
        kept (an EWC / L2-SP / proximal term's reference weights): an alias of the parameter's
        memory, updated with it by every step, so the difference is always zero and the penalty
        pulls nowhere. Reported where the alias is taken (a ``.clone()`` there is the fix)."""
        pi, ai = st.t.get(param.tid), st.t.get(anchor.tid)
        if pi is None or ai is None or ai.alias_of != param.tid or ai.rg is not False or not pi.param or \
                not pi.leaf or ai.created is None:
            return
        span = self.it.span_of(node)
        if ai.created.row == span.row and ai.created.file == span.file:
            return  # `w - w.detach()` written in one expression: a surrogate, meant
        self.it.emit(Event("anchor_aliases_param", ai.created, {
            "name": ai.name or "the anchor", "param": pi.name or "the parameter", "line": span.row,
            "how": "`.data`" if ai.data_alias else "`.detach()`"},
            related=(Related(span, "the difference that is always zero", "note"),)))

    def check_target_detached(self, pred: Value, target: Value, st: State, span: Span) -> None:
        """GW505: a regression target that requires grad through the very parameters of the
        prediction (a bootstrap target, a teacher that is the student): gradients flow into
        the target too. Reported where the target's forward went through those parameters."""
        if not (isinstance(pred, TensorV) and isinstance(target, TensorV)):
            return
        pi, ti = st.t.get(pred.tid), st.t.get(target.tid)
        if pi is None or ti is None or pi.rg is not True or ti.rg is not True or not st.grad_enabled:
            return
        if pi.grad_fn is None or ti.grad_fn is None:
            return
        shared = self.it.graph.leaves_under(pi.grad_fn) & self.it.graph.leaves_under(ti.grad_fn)
        params = {t for t in shared if st.t.get(t) is not None and st.t[t].param}
        if not params:
            return
        own = {t for t in self.it.graph.leaves_under(pi.grad_fn) - shared if st.t.get(t) is not None and st.t[t].param}
        if own:
            # the prediction also goes through parameters of its own (an encoder before a shared
            # discriminator: feature matching): the shared part acts as a fixed feature map for
            # this loss, not as a bootstrap target of the model being trained
            return
        pred_nodes = self._node_ids(pi.grad_fn)
        best = None
        stack, seen = [ti.grad_fn], set()
        while stack:
            n = stack.pop()
            if n.id in seen or n.id in pred_nodes:
                continue
            seen.add(n.id)
            if n.id in st.freed:
                # the target carries a graph a backward already freed: the backward through this loss
                # raises there (GW402, where the graph was kept), gradients never flow into it
                return
            if set(n.leaves) & params and (best is None or n.seq > best.seq):
                best = n
            stack.extend(n.inputs)
        if best is None:
            return
        where = ti.held_at or self.it.graph.site_here(best.stack, best.span)  # kept on an object: detach it there
        # the same computation run twice (two passes of one model, as a Pi-model's or a
        # consistency loss compares them): differentiating both may be the method, not a slip
        mirrored = self._mirrored(pi.grad_fn, ti.grad_fn)
        self.it.emit(Event("target_not_detached", where, {"name": ti.name or "target", "loss_line": span.row},
                           related=(Related(span, "the loss that uses it as a target", "backward"),),
                           fix_facts={"use_span": where}, severity=3 if mirrored else None))

    @staticmethod
    def _mirrored(a: Any, b: Any) -> bool:
        """Whether the graphs under ``a`` and ``b`` apart from what they share are the same ops."""
        under_a, under_b = list(walk_nodes([a])), list(walk_nodes([b]))
        ids_a, ids_b = {n.id for n in under_a}, {n.id for n in under_b}
        ops_a = sorted(n.op for n in under_a if n.id not in ids_b)
        ops_b = sorted(n.op for n in under_b if n.id not in ids_a)
        return bool(ops_a) and ops_a == ops_b

    def check_peer_target(self, pred: Value, target: Value, st: State, span: Span, loss_node: Any) -> None:
        """GW507: the target distribution of a distillation / mutual-learning loss is another
        model's prediction that still carries its graph: the loss also pulls that model toward
        this one. Watched until a backward reaches the loss, and reported only when an
        optimizer trains those parameters."""
        if not (isinstance(pred, TensorV) and isinstance(target, TensorV)) or not st.grad_enabled:
            return
        pi, ti = st.t.get(pred.tid), st.t.get(target.tid)
        if pi is None or ti is None or ti.rg is not True or ti.grad_fn is None or pi.grad_fn is None:
            return
        if ti.dtype in ("int", "bool"):
            return
        mine = {t for t in self.it.graph.leaves_under(pi.grad_fn) if t in st.t and st.t[t].param}
        behind = {t for t in self.it.graph.leaves_under(ti.grad_fn) if t in st.t and st.t[t].param}
        theirs = behind - mine
        if mine and behind and behind == mine:
            # the model's own prediction as its soft target (VAT's clean prediction, a
            # consistency target): GW505, reported where the target branches off
            self.it.backward.watched[loss_node.id] = Event("target_not_detached", span, {
                "name": ti.name or "target", "loss_line": span.row, "target_node": ti.grad_fn,
                "theirs": tuple(behind)}, (Related(span, "the loss that uses it as a target", "backward"),))
            return
        if not mine or not theirs:
            return  # no model of its own behind the target
        where = ti.held_at or ti.stored_at or self.it.graph.site_here(ti.grad_fn.stack, ti.grad_fn.span)
        self.it.backward.watched[loss_node.id] = Event("peer_target_not_detached", where, {
            "name": f" `{ti.name}`" if ti.name else "", "loss_line": span.row, "theirs": tuple(theirs),
            "target_node": ti.grad_fn},
            (Related(span, "used as the target distribution here", "call"),))

    @staticmethod
    def _node_ids(root: Any) -> set:
        return {n.id for n in walk_nodes([root])}
