"""Checks of views and in-place writes over the gradient-flow facts: writes into views made under
``no_grad`` or by a custom Function, overlapping copies (``x[1:] = x[:-1]``, ``unfold``
windows), ``copy_``/``index_put_`` of a view of itself, which dims of an ``expand`` output
broadcast (whether a write into it raises or silently changes every copy), and loops that
freeze parameters.
"""
from __future__ import annotations

import ast
from typing import Any, List, Optional, Sequence, Tuple

from gradwarden.engine.checks.flow import _const_int
from gradwarden.engine.checks.loopshift import smearing_loops
from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import ConstV, NumberV, SeqV, State, TensorV, Value


MAX_FREEZE_ITEMS = 4096
# what a dim of an expand output does (ViewChecks.note_expand)
KEPT, MAYBE, BROADCAST = 0, 1, 2


def _halt() -> None:
    raise Halt()


def _same_storage(st: State, a: TensorV, b: TensorV) -> bool:
    ai, bi = st.t.get(a.tid), st.t.get(b.tid)
    return ai is not None and bi is not None and ai.storage == bi.storage and not ai.data_alias and not bi.data_alias


def _is_view_of(self: Any, v: TensorV, t: TensorV) -> bool:
    """``v`` is ``t`` itself, or a view of it made by an explicit indexing or layout op."""
    if v.tid == t.tid:
        return True
    if v.tid in self.flow.unknown_derived or t.tid in self.flow.unknown_derived:
        return False
    sl = self.flow.slices.get(v.tid)
    return (sl is not None and sl[0] == t.tid) or self.flow.layouts.get(v.tid) == t.tid


def _partial_overlap(self: Any, st: State, parent: int, ia: Tuple[Any, ...], ib: Tuple[Any, ...]) -> bool:
    pi = st.t.get(parent)
    if pi is None or pi.created is None or parent in self.flow.noncontig:
        return False
    if len(ia) != 1 or len(ib) != 1 or not isinstance(ia[0], slice) or not isinstance(ib[0], slice):
        return False
    shape = self.flow.shapes.get(parent)
    if not shape or not isinstance(shape[0], int):
        return False
    n = shape[0]
    ra, rb = range(*ia[0].indices(n)), range(*ib[0].indices(n))
    if ra.step != 1 or rb.step != 1 or not ra or not rb:
        return False
    if (ra.start, ra.stop) == (rb.start, rb.stop):
        return False
    return max(ra.start, rb.start) < min(ra.stop, rb.stop)


def _shift_smears(self: Any, target: ast.Subscript, source: ast.expr) -> bool:
    """``x[:, k:, rest] = x[:, :-k, rest]``: full slices first, then a forward shift, the rest the same
    (measured: a silent smear; the same along dim 0 raises, the backward shift comes out right)."""
    if not isinstance(source, ast.Subscript) or ast.unparse(source.value) != ast.unparse(target.value):
        return False
    dst = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    src = source.slice.elts if isinstance(source.slice, ast.Tuple) else [source.slice]
    if len(dst) != len(src) or len(dst) < 2:
        return False
    diff = [i for i, (a, b) in enumerate(zip(dst, src)) if ast.unparse(a) != ast.unparse(b)]
    if len(diff) != 1 or diff[0] == 0:
        return False
    d = diff[0]
    if any(not _full(dst[i]) for i in range(d)):
        return False
    a, b = dst[d], src[d]
    if not isinstance(a, ast.Slice) or not isinstance(b, ast.Slice) or a.step is not None or b.step is not None:
        return False
    k = _const_int(a.lower) if a.lower is not None else None
    if k is None or k <= 0 or a.upper is not None:
        return False
    lo = _const_int(b.lower) if b.lower is not None else 0
    return lo == 0 and b.upper is not None and _const_int(b.upper) == -k


def _spelled_out(index: Tuple[Any, ...], ndim: Optional[int]) -> Optional[Tuple[Any, ...]]:
    """A basic index with its ``...`` expanded and trailing dims made explicit (full slices), when
    the tensor's rank says how many dims ``...`` stands for; None when it cannot (a ``None`` that adds a
    dim, an unknown rank with ``...``)."""
    if any(i is None for i in index):
        return None
    items = list(index)
    n_ell = sum(1 for i in items if i is ...)
    if n_ell > 1 or (n_ell and ndim is None):
        return None
    if ndim is None:
        return tuple(items)
    explicit = len(items) - n_ell
    if explicit > ndim:
        return None
    if n_ell:
        k = next(j for j, i in enumerate(items) if i is ...)
        items = items[:k] + [slice(None)] * (ndim - explicit) + items[k + 1:]
    return tuple(items) + (slice(None),) * (ndim - len(items))


def _whole(i: Any) -> bool:
    return isinstance(i, slice) and i.start in (None, 0) and i.stop is None and i.step in (None, 1)


def _smearing_shift(shape: Optional[Tuple[Any, ...]], dst: Tuple[Any, ...], src: Tuple[Any, ...]) -> bool:
    """``dst`` and ``src`` index one contiguous tensor the same way but for one dim ``d`` after whole
    leading dims, where ``dst`` is ``src`` moved forward and the two share elements: ``x[:, 1:] = x[:, :-1]``,
    ``x[..., 1:] = x[..., :-1]``, ``x[:, :, 2:] = x[:, :, :-2]``, ``x.narrow(-1, 1, n - 1)``. Measured
    (torch 2.13, CPU): such a view is not dense, torch's overlap check gives up on it, and the copy runs
    in memory order, smearing the first slice over the window; the backward shift (``x[:, :-1] = x[:, 1:]``)
    comes out right, and the same shift along the first non-trivial dim is dense and raises."""
    known = shape is not None and fs.ELL not in shape
    ndim = len(shape) if known else None
    a, b = _spelled_out(dst, ndim), _spelled_out(src, ndim)
    if a is None or b is None or len(a) != len(b):
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
    if len(diff) != 1 or diff[0] == 0:
        return False
    d = diff[0]
    if not all(_whole(a[i]) for i in range(d)):
        return False
    if known and all(shape[i] == 1 for i in range(d)):  # type: ignore[index]
        return False  # the leading dims are all of size one: the views are dense and torch raises
    sa, sb = a[d], b[d]
    if not isinstance(sa, slice) or not isinstance(sb, slice) or sa.step not in (None, 1) or sb.step not in (None, 1):
        return False
    n = shape[d] if known else None  # type: ignore[index]
    if isinstance(n, int):
        ra, rb = range(*sa.indices(n)), range(*sb.indices(n))
        return len(ra) == len(rb) > 0 and rb.start < ra.start < rb.stop
    # an unknown length: two windows with known non-negative bounds, or `k:` against `:-k`
    bounds = [0 if sa.start is None else sa.start, sa.stop, 0 if sb.start is None else sb.start, sb.stop]
    if all(isinstance(v, int) and v >= 0 for v in bounds):
        a0, a1, b0, b1 = bounds
        return a1 - a0 == b1 - b0 > 0 and b0 < a0 < b1
    k = sa.start
    return isinstance(k, int) and k > 0 and sa.stop is None and sb.start in (None, 0) and sb.stop == -k


def _emit_smear(self: Any, span: Span, name: str, src: Optional[ast.AST]) -> None:
    self.it.emit(Event("self_overlap", span, {
        "op": "copy_", "name": name,
        "desc": "its source is the same tensor's window one shift earlier along a later dimension, which "
                "PyTorch cannot see overlap: the copy runs in memory order and reads values it already overwrote",
        "outcome": "nothing raises, and the first slice is smeared over the whole window (clone the source first)"},
        fix_facts={"how": "slices", "stmt_span": span, "src_span": self.it.span_of(src) if src is not None else None},
        severity=2))


def _loop_smear(self: Any, stmt: ast.stmt, span: Span, name: str) -> bool:
    """``x[:, t] = x[:, t - 1]`` in a loop running upwards (engine/checks/loopshift.py): reported once,
    at the ``for`` line, as a silent smear."""
    if self._smear_loops is None:
        self._smear_loops = smearing_loops(self.it.tree) if "range(" in self.it.src.text else {}
    loop = self._smear_loops.get(id(stmt))
    if loop is None:
        return False
    where = self.it.span_of(loop)
    if where in self._smears_said:
        return True
    self._smears_said.add(where)
    self.it.emit(Event("self_overlap", where, {
        "op": "slice assignment", "name": name,
        "desc": f"the loop runs towards the slots it reads: each iteration reads `{self.it.text_of(stmt.value)}` "
                f"(line {span.row}), which the iteration before it just wrote",
        "outcome": "nothing raises, and the first slot is copied into every later one (values and gradients "
                   "smeared); run the loop the other way or read from a copy"},
        related=(Related(span, "each slot is copied from the one written just before", "write"),),
        fix_facts={"how": "loop", "stmt_span": span, "src_span": None}, severity=2))
    return True


def _full(p: ast.expr) -> bool:
    return isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None


def _report_overlap(self: Any, st: State, span: Span, name: str, op: str, how: str, sure: bool = True,
                    src: Optional[ast.AST] = None) -> None:
    desc = {"layout": "its source is a transposed/permuted view of the destination",
            "slices": "its source is a slice of the same tensor that shares rows with the destination",
            "index": "the destination is its own index tensor",
            "values": "the values written are a view of the destination itself"}[how]
    if not sure:
        desc += " (unless it is a bool mask: a mask with a scalar value is a masked fill)"
    self.it.emit(Event("self_overlap", span, {"op": op, "name": name, "desc": desc,
                                              "outcome": "the write raises (clone the source first)"},
                       fix_facts={"how": how, "stmt_span": span,
                               "src_span": self.it.span_of(src) if src is not None else None},
                       severity=None if sure else 3))
    if sure:
        _halt()


def _integer_index(self: Any, p: ast.expr, st: State) -> bool:
    """A Python integer: a literal, or a name bound to a number (a loop index over ``range``)."""
    if isinstance(p, ast.Constant):
        return isinstance(p.value, int) and not isinstance(p.value, bool)
    if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
        return isinstance(p.operand.value, int)
    if isinstance(p, (ast.Name, ast.BinOp)):
        v = self.it.ev.eval(p, st)
        return isinstance(v, NumberV) or isinstance(v, ConstV) and isinstance(v.value, int) and \
            not isinstance(v.value, bool)
    return False


def _is_freeze_body(stmts: List[ast.stmt], depth: int = 0) -> bool:
    found = False
    for s in stmts:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute) and \
                s.targets[0].attr == "requires_grad":
            found = True
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr == "requires_grad_":
            found = True
        elif isinstance(s, ast.If) and depth < 3:
            inner = [x for x in s.body + s.orelse]
            if not all(_freeze_stmt(x, depth + 1) for x in inner):
                return False
            found = found or _is_freeze_body(inner, depth + 1)
        elif isinstance(s, (ast.Pass, ast.Continue)):
            continue
        elif isinstance(s, ast.For) and depth < 2 and not s.orelse and _pure_iter(s.iter):
            if not _is_freeze_body(s.body, depth + 1):
                return False
            found = True
        else:
            return False
    return found


def _freeze_stmt(s: ast.stmt, depth: int) -> bool:
    if isinstance(s, (ast.Pass, ast.Continue)):
        return True
    return _is_freeze_body([s], depth) if not isinstance(s, (ast.Pass, ast.Continue)) else True


def _pure_iter(node: ast.expr) -> bool:
    """An iterable whose evaluation has no effect worth repeating: names, attributes and calls
    of module/parameter listing methods (``model.named_parameters()``, ``list(...)``)."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("parameters", "named_parameters", "modules", "named_modules",
                                                       "children", "named_children", "values", "items", "buffers"):
            return _pure_iter(f.value) and all(isinstance(a, ast.Constant) for a in node.args)
        if isinstance(f, ast.Name) and f.id in ("list", "tuple", "enumerate", "zip", "reversed") and node.args:
            return all(_pure_iter(a) for a in node.args)
    return False


class ViewChecks:
    """The ``viewchecks`` role: checks of views and overlapping writes."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)
        self._smear_loops: Optional[dict] = None  # id(stmt) -> its upward shift loop (loopshift.py)
        self._smears_said: set = set()

    # --------------------------------------------------------------------------- GW712 / GW713
    def check_view_method(self: Any, st: State, t: TensorV, name: str, args: List[Value], kwargs: dict,
                          node: ast.AST) -> None:
        span = self.it.span_of(node)
        info = st.t.get(t.tid)
        if info is None:
            return
        label = self.it.tensors.receiver_text(node) or info.name or "tensor"
        if name == "detach_":
            sure = self.flow.views.get(t.tid)
            if sure is None or t.tid in self.flow.unknown_derived:
                return
            self.it.emit(Event("detach_view", span, {
                "name": label, "cond": "" if sure else " (if `reshape`/`flatten` returned a view)"},
                related=((Related(info.created, "it is made as a view here", "created"),)
                         if info.created is not None and info.created != span else ()),
                fix_facts={"call_span": span}, severity=None if sure else 3))
            if sure:
                _halt()
            return
        if name == "copy_":
            src = kwargs.get("src", args[0] if args else None)
            if isinstance(src, TensorV):
                verdict = self.overlap_of(st, t, src)
                if verdict == "shift":
                    _emit_smear(self, span, label, node.args[0] if isinstance(node, ast.Call) and node.args else None)
                elif verdict is not None:
                    arg = node.args[0] if isinstance(node, ast.Call) and node.args else None
                    _report_overlap(self, st, span, label, "copy_", verdict, src=arg)
            return
        if name == "index_put_":
            indices = kwargs.get("indices", args[0] if args else None)
            values = kwargs.get("values", args[1] if len(args) > 1 else None)
            for x in self.it.graph.slot_tensors(st, indices) if indices is not None else []:
                if _is_view_of(self, x, t):
                    _report_overlap(self, st, span, label, "index_put_", "index")
            if isinstance(values, TensorV) and values.tid != t.tid and _is_view_of(self, values, t):
                _report_overlap(self, st, span, label, "index_put_", "values")

    def mark_unfold(self: Any, st: State, t: TensorV, out: TensorV, args: List[Value], kwargs: dict, span: Span) -> None:
        """``x.unfold(dim, size, step)`` is a strided view, not an expanded tensor: torch raises
        nothing when it is written, and with ``step < size`` neighbouring windows share elements."""
        info = st.t.get(out.tid)
        if info is None:
            return
        if info.expanded is not None and st.t.get(t.tid) is not None and st.t[t.tid].expanded is None:
            st.update_t(out.tid, expanded=None)
        vals = []
        for i, key in ((1, "size"), (2, "step")):
            v = kwargs.get(key, args[i] if len(args) > i else None)
            vals.append(v.value if isinstance(v, ConstV) and isinstance(v.value, int) else None)
        size, step = vals
        overlap = None if size is None or step is None else step < size
        self.flow.unfold_views[out.tid] = (span, overlap)
        self.flow.noncontig.add(out.tid)

    # --------------------------------------------------------------------------- GW301: which dims broadcast
    def note_expand(self: Any, st: State, t: TensorV, out: TensorV, name: str, args: List[Value],
                    node: ast.AST) -> None:
        """Which dims of ``x.expand(...)`` repeat one memory cell, as far as the code tells: a size
        of ``-1`` keeps a dim, ``*x.shape`` (or ``*x.size()``) keeps all of x's dims, a dim of known
        size 1 expanded to a known size > 1 broadcasts, any other size may. Read by
        ``indexed_write_is_silent``: a write through integer indices that remove every dim that
        may broadcast writes one copy's worth of memory and does not raise."""
        call = node if isinstance(node, ast.Call) else None
        src_shape = self.flow.shapes.get(t.tid)
        if name == "expand_as":
            other = args[0] if args else None
            dst_shape = self.flow.shapes.get(other.tid) if isinstance(other, TensorV) else None
            if src_shape is None or dst_shape is None or ... in src_shape or ... in dst_shape:
                return
            sizes: List[Any] = list(dst_shape)
        else:
            if call is None or call.keywords:
                return
            recv = self.it.text_of(call.func.value) if isinstance(call.func, ast.Attribute) else None
            sizes = []
            for a in call.args:
                if isinstance(a, ast.Starred):
                    v = a.value
                    own = v.func.value if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and \
                        v.func.attr == "size" and not v.args else v.value if isinstance(v, ast.Attribute) and \
                        v.attr == "shape" else None
                    if own is None or recv is None or self.it.text_of(own) != recv:
                        return  # sizes of unknown number and kind
                    sizes.append("own")  # x's own dims, kept (of unknown number)
                elif isinstance(a, ast.Constant) and isinstance(a.value, int):
                    sizes.append(a.value)
                elif isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub) and isinstance(a.operand, ast.Constant):
                    sizes.append(-a.operand.value)
                else:
                    sizes.append(None)
            if len(sizes) == 1 and sizes[0] is None and len(call.args) == 1:
                return  # x.expand(shape): one argument holding every size
        flags: List[int] = []
        tail = False
        own_seen = False
        n_src = None if src_shape is None or ... in src_shape else len(src_shape)
        n_new = None if n_src is None or "own" in sizes else len(sizes) - n_src
        for i, size in enumerate(sizes):
            if size == "own":
                own_seen = True
                continue
            if size == -1:
                flag = KEPT
            elif n_new is not None and i >= n_new and isinstance(size, int):
                d = src_shape[i - n_new]
                flag = BROADCAST if d == 1 and size > 1 else KEPT if isinstance(d, int) and d == size else MAYBE
            elif n_new is not None and i < n_new and isinstance(size, int):
                flag = BROADCAST if size > 1 else KEPT
            else:
                flag = MAYBE
            if own_seen:
                tail = tail or flag != KEPT  # a dim after x's own ones: its position is unknown
            else:
                flags.append(flag)
        self.flow.broadcast_dims[out.tid] = (tuple(flags), tail)

    def indexed_write_is_silent(self: Any, t: TensorV, sl: ast.expr, st: State) -> Optional[bool]:
        """A write ``x[index] = v`` into the output of ``expand``: True when the index removes
        every dim that may broadcast with integers (``x[i]`` of ``base.expand(q, *base.shape)``:
        torch writes the shared memory once, every copy changes, nothing raises); False when a dim
        certainly broadcast stays whole (``:`` or not indexed: torch raises); None: unknown."""
        known = self.flow.broadcast_dims.get(t.tid)
        if known is None:
            return None
        flags, tail = known
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        kept: List[int] = []  # the flags of the dims the written part keeps
        for i, p in enumerate(parts):
            if isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis):
                return None
            flag = flags[i] if i < len(flags) else (MAYBE if tail else KEPT)
            if isinstance(p, ast.Slice):
                if p.lower is None and p.upper is None and p.step is None:
                    kept.append(flag)
                elif flag != KEPT:
                    return None  # a part of a broadcast dim: overlaps unless it is one element long
                continue
            if not _integer_index(self, p, st):
                return None
        kept += list(flags[len(parts):])
        if any(f == BROADCAST for f in kept):
            return False
        if any(f == MAYBE for f in kept) or (tail and len(parts) <= len(flags)):
            return None
        return True

    # --------------------------------------------------------------------------- GW711 / GW714
    def check_write(self: Any, st: State, target: TensorV, opname: str, span: Span, site: Optional[Span],
                    name: str = "", others: Sequence[Value] = ()) -> None:
        where = site or span
        nv = self.flow.nograd_views.get(target.tid)
        if nv is not None and st.grad_enabled:
            vspan, sure, base_rg, fn = nv
            # a view of a tensor that does not require grad: only a write that makes it require
            # grad (the value written does) has a history to rebase, and raises
            value_rg = not base_rg and any(isinstance(o, TensorV) and o.tid in st.t and st.t[o.tid].rg is True
                                           for o in others)
            if base_rg or value_rg:
                info = st.t.get(target.tid)
                what = f"a view of its input that `{fn}.apply` returns as-is, without grad tracking" if fn else \
                    "a view created under no_grad"
                cond = " (if `reshape` returned a view)" if not sure else ""
                if value_rg:
                    cond = ": the value written requires grad" + cond
                related = (Related(vspan, f"`{fn}.apply` returns its input as-is here" if fn else
                                   "the view is made here, under no_grad", "created"),)
                at, view_at = "", f" (line {vspan.row})"
                if value_rg and vspan.row != where.row and self.it.graph.in_current_function(vspan) and not self.it.foreign_stack:
                    # the view is made by the code that writes it: a copy there (`.clone()`) is the fix
                    at, view_at = f" (line {where.row})", ""
                    where, related = vspan, (Related(site or span, f"written in place here ({opname})", "write"),)
                elif not fn and vspan.row != where.row and not self.it.graph.in_current_function(vspan) \
                        and not self.it.foreign_stack and any(
                            v.__class__ is TensorV and v.tid == target.tid for attrs in st.objs.values()
                            for v in attrs.values()):
                    # made under no_grad by other code and kept in an object (a reset that stores a
                    # window of a buffer): that view is the line to change, as for an expand kept
                    # from __init__; views handed back to the writer are fixed where written (C200)
                    at, view_at = f" (line {where.row})", ""
                    where, related = vspan, (Related(site or span, f"written in place here ({opname}): raises", "write"),)
                self.it.emit(Event("nograd_view_inplace", where, {
                    "op": opname, "name": name or (info.name if info is not None else "") or "view", "view_line": vspan.row,
                    "what": what, "cond": cond, "at": at, "view_at": view_at},
                    related=related, fix_facts={"view_span": vspan, "value_rg": value_rg}, severity=None if sure else 3))
                if sure:
                    _halt()
        uv = self.flow.unfold_views.get(target.tid)
        if uv is not None and uv[1] is not False:
            uspan, overlap = uv
            info = st.t.get(target.tid)
            self.it.emit(Event("unfold_write", where, {
                "op": opname, "name": name or (info.name if info is not None else "") or "window", "unfold_line": uspan.row,
                "cond": "" if overlap else " (if its windows overlap: step < size)"},
                related=(Related(uspan, "`unfold` makes windows that share elements here", "created"),),
                fix_facts={"unfold_span": uspan}, severity=None if overlap else 3))

    def check_setitem(self: Any, st: State, t: TensorV, target: ast.Subscript, value: Value, stmt: ast.AST) -> None:
        """``x[idx] = v``: an index tensor or a value that shares memory with ``x`` (advanced
        indexing: index_put_), or a value slice of ``x`` that overlaps the destination slice."""
        if not isinstance(stmt, ast.Assign):
            return
        span = self.it.span_of(stmt)
        name = self.it.text_of(target.value)
        if _loop_smear(self, stmt, span, name):
            return
        parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        advanced = False
        for p in parts:
            if not isinstance(p, (ast.Name, ast.Attribute)):
                if not isinstance(p, (ast.Slice, ast.Constant, ast.UnaryOp)):
                    advanced = advanced or isinstance(p, (ast.Subscript, ast.Call, ast.Compare, ast.List))
                continue
            v = self.it.ev.eval(p, st)
            if isinstance(v, (TensorV, SeqV)):
                advanced = True
            if isinstance(v, TensorV) and _is_view_of(self, v, t):
                # an integer index always goes through index_put_; a bool mask only when the value
                # is a tensor with elements (a scalar value is a masked_fill)
                kind = self.flow.dtypes.get(v.tid)
                vshape = self.flow.shapes.get(value.tid) if isinstance(value, TensorV) else ()
                tensor_value = isinstance(value, TensorV) and vshape != ()
                if kind == "int" or (tensor_value and len(parts) == 1):
                    _report_overlap(self, st, span, name, "index_put_", "index", src=p)
                elif kind is None and len(parts) == 1:
                    _report_overlap(self, st, span, name, "index_put_", "index", sure=False, src=p)
        recorded = isinstance(value, TensorV) and (self.flow.slices.get(value.tid) or (None,))[0] == t.tid
        if isinstance(value, TensorV) and not advanced and not recorded and _shift_smears(self, target, stmt.value):
            _emit_smear(self, span, name, stmt.value)
            return
        if not isinstance(value, TensorV) or value.tid == t.tid or not _is_view_of(self, value, t):
            return
        if advanced:
            _report_overlap(self, st, span, name, "index_put_", "values", src=stmt.value)
            return
        index = self.flow.basic_index(target.slice, st)
        src = self.flow.slices.get(value.tid)
        if index is None or src is None or src[0] != t.tid:
            return
        if t.tid not in self.flow.noncontig and _smearing_shift(self.flow.shapes.get(t.tid), index, src[1]):
            _emit_smear(self, span, name, stmt.value)
            return
        if _partial_overlap(self, st, t.tid, index, src[1]):
            _report_overlap(self, st, span, name, "copy_", "slices", src=stmt.value)

    # --------------------------------------------------------------------------- freezing loops
    def freeze_loop(self: Any, stmt: ast.For, st: State) -> Optional[List[State]]:
        """``for p in model.parameters(): p.requires_grad = False`` over more parameters than the
        interpreter unrolls: run the (tiny) body once per parameter, so that each is frozen."""
        if stmt.orelse or not _is_freeze_body(stmt.body) or not _pure_iter(stmt.iter):
            return None
        it = self.it.ev.eval(stmt.iter, st)
        items = self.it.ev.known_items(it, st)
        if items is None or len(items) > MAX_FREEZE_ITEMS:
            return None
        states = [st]
        for item in items:
            for s in states:
                self.it.stores.assign(stmt.target, item, s, stmt)
            states = self.it.stmts.exec_block(stmt.body, states)
            for s in states:
                if s.flow == "continue":
                    s.flow = None
            if any(s.flow is not None for s in states):
                return None if not states else [s for s in states]
            states = self.it.stmts.cap(states)
            if not states:
                break
        return states

    def overlap_of(self: Any, st: State, dst: TensorV, src: TensorV) -> Optional[str]:
        """How ``src`` provably overlaps ``dst`` in part (not identically): "layout" (a transposed
        or permuted view of it), "slices" (two slices of one contiguous tensor along its first
        dim that share rows: torch raises), "shift" (the same window moved forward along a later
        dim: torch copies anyway and smears, ``_smearing_shift``), or None."""
        if src.tid == dst.tid or not _same_storage(st, dst, src):
            return None
        if src.tid in self.flow.unknown_derived or dst.tid in self.flow.unknown_derived:
            return None
        if self.flow.layouts.get(src.tid) == dst.tid or self.flow.layouts.get(dst.tid) == src.tid:
            return "layout"
        a, b = self.flow.slices.get(dst.tid), self.flow.slices.get(src.tid)
        if a is None or b is None or a[0] != b[0]:
            return None
        if a[0] not in self.flow.noncontig and _smearing_shift(self.flow.shapes.get(a[0]), a[1], b[1]):
            return "shift"
        return "slices" if _partial_overlap(self, st, a[0], a[1], b[1]) else None
