"""The gradient-flow checks (methods of the interpreter, bound in engine/checks/flow.py's FlowMixin).

Each one states a check PyTorch makes (or a silent failure it lets through) over the facts
FlowMixin records, and emits an event for the rule that words it (rules/flow.py). A check
that proves torch raises ends the path (``Halt``), as torch would.
"""
from __future__ import annotations

import ast
import re
from typing import Any, List, Optional, Sequence, Tuple

from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.checks.flowfacts import Cut
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import ConstV, ObjV, RefV, SeqV, State, TensorV, Value, walk_nodes
from gradwarden.engine.checks.zerograd import check_zero_gradient

API_TEXT = {"backward": "`.backward()`", "autograd.backward": "`torch.autograd.backward`",
            "autograd.grad": "`torch.autograd.grad`"}


def _halt() -> None:
    raise Halt()


def _region_text(self: Any, region: Span) -> str:
    line = self.src.line(region.row).strip() if not self.foreign_stack else ""
    if line.startswith("@"):
        return f"`{line}` (line {region.row})"
    if line.startswith(("with ", "async with ")):
        inner = line.split(None, 1)[1].rstrip(":").strip() if " " in line else line
        return f"`{inner}` (line {region.row})" if len(inner) <= 60 else f"`torch.no_grad()` (line {region.row})"
    return f"gradients disabled at line {region.row}"


def _is_with(self: Any, region: Span) -> bool:
    if self.foreign_stack:
        return True
    return self.src.line(region.row).lstrip().startswith(("with ", "async with "))


def why_no_grad(self: Any, cut: Cut, loc: Optional[Span]) -> str:
    """Why a tensor with this cut does not require grad, in words."""
    line = loc.row if loc is not None else (cut.span.row if cut.span is not None else 0)
    k = cut.kind
    if k == "nograd":
        region = _region_text(self, cut.region) if cut.region is not None else "with gradients disabled"
        return f"it is computed under {region}"
    if k == "detach":
        return f"{cut.what} at line {line} cuts it from the graph"
    if k == "rewrap":
        origin = cut.origin
        if origin is not None and origin.kind in ("item",) and origin.span is not None:
            return (f"{origin.what} (line {origin.span.row}) turns it into a Python number and {cut.what} "
                    f"at line {line} builds a new tensor without a graph")
        if origin is not None and origin.kind not in ("data",) and origin.span is not None:
            return (f"{cut.what} at line {line} copies values whose graph was cut by {origin.what} "
                    f"(line {origin.span.row}) into a new tensor without a graph")
        return f"{cut.what} at line {line} copies its values into a new tensor without a graph"
    if k == "data_attr":
        return f"`.data` at line {line} takes its values without the graph"
    if k == "nondiff":
        return f"{cut.what} at line {line} is not differentiable (its result never requires grad)"
    if k == "marked":
        return f"{cut.what} at line {line} marks the custom Function's output it is computed from as non-differentiable"
    if k == "frozen":
        return f"every parameter it depends on is frozen ({cut.what} at line {line})"
    if k == "checkpoint":
        return f"reentrant `checkpoint` at line {line} returns no graph: none of its inputs requires grad"
    if k == "item":
        return f"{cut.what} at line {line} turns it into a Python number"
    return "nothing it is computed from requires grad"


# --------------------------------------------------------------------------- GW701 / GW702
def check_backward(self: Any, st: State, roots: Sequence[TensorV], span: Span, given: bool, api: str) -> None:
    """``backward()`` / ``autograd.backward`` / ``autograd.grad`` on ``roots``: each must
    require grad, and without a gradient argument each must hold exactly one element."""
    for i, r in enumerate(roots):
        info = st.t.get(r.tid)
        if info is None:
            continue
        if info.rg is False and info.grad_fn is None:
            cut = self.cuts.get(r.tid)
            if cut is not None:
                self.report_no_grad(st, r, cut, span, i, api)
            return
        if info.rg is True and info.grad_fn is None and r.tid in self.rewrapped and api != "autograd.grad":
            cut = self.rewrapped[r.tid]
            loc = self._frame_span(cut.stack, cut.span) or span
            if loc != span and self.branch_conflict(loc, span):
                return
            self.emit(Event("no_grad_backward", loc, {
                "name": info.name or "tensor", "state": "is a new leaf made to require grad",
                "why": why_no_grad(self, cut if cut.kind != "rewrap" else cut, loc),
                "outcome": f"{API_TEXT.get(api, api)} at line {span.row} runs but reaches no parameter (their "
                           "gradients stay unchanged)"},
                related=(Related(span, "this backward computes a gradient for that new leaf only", "backward"),),
                fix_facts={"cut_kind": "rewrap_rg", "backward_span": span}, severity=2))
    check_zero_gradient(self, st, roots, span)
    if given:
        return
    for r in roots:
        info = st.t.get(r.tid)
        if info is None or info.rg is False:
            continue
        shape = self.shapes.get(r.tid)
        sure = fs.is_nonscalar(shape)
        if not sure and not fs.maybe_nonscalar(shape):
            continue
        made = self._node_frame_span(info)
        related = [Related(span, "raises here: a non-scalar needs `gradient=`", "backward")]
        where = span
        if made is not None and made != span:
            n = info.grad_fn
            if api == "backward" and n is not None and tuple(n.stack) == tuple(self.call_spans) and \
                    made.row != span.row and not self.foreign_stack:
                # a loss computed by the code that backwards it: reducing it there is the fix
                # (`autograd.grad` of a vector is fixed at the call, with `grad_outputs`)
                where = made
                related[0] = Related(span, f"{API_TEXT.get(api, api)} raises here: a non-scalar needs `gradient=`",
                                     "backward")
            else:
                related.insert(0, Related(made, f"`{info.name or 'it'}` is computed here with shape "
                                                f"{_shape_text(shape)}", "created"))
        self.emit(Event("nonscalar_backward", where, {
            "name": info.name or "tensor", "shape": _shape_text(shape), "api": API_TEXT.get(api, api),
            "at": f" at line {span.row}" if where is not span else "",
            "cond": ("" if info.rg is True else " (if it requires grad; otherwise it has no graph at all)") +
                    ("" if sure else " (unless its unknown dimensions are all 1, e.g. a batch of one)")},
            related=tuple(related), fix_facts={"backward_span": span, "api": api},
            severity=None if info.rg is True and sure else 3))
        if info.rg is True and sure:
            _halt()
        return


def _shape_text(shape: Any) -> str:
    if shape is None:
        return "?"
    parts = ["..." if d is ... else ("?" if d is None else str(d)) for d in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def report_no_grad(self: Any, st: State, root: TensorV, cut: Cut, span: Span, index: int, api: str) -> None:
    info = st.t[root.tid]
    if cut.kind == "data" and not cut.sure:
        return  # no cut to point at, and something unknown may bring a graph: say nothing
    if cut.kind == "data":
        loc = span
    else:
        loc = _cut_site(self, st, root, cut) or span
        if cut.kind == "nograd" and cut.region is not None and (
                not st.grad_enabled and self._region(st) == cut.region or not _is_with(self, cut.region)
                or _in_callee(self, cut)):
            # the whole computation, backward included, runs without grad; or grad was turned
            # off by a decorator / set_grad_enabled(False), or by a `with` inside a helper this
            # frame calls: that line is the one to change
            loc = cut.region
    unfreeze = _missed_unfreeze(self, st, cut)
    if unfreeze is not None:
        loc = unfreeze  # the line meant to unfreeze them is the one the fix changes
    if loc != span and self.branch_conflict(loc, span):
        return  # the cut and the backward sit in opposite branches of the same condition
    related: List[Related] = []
    if unfreeze is not None and cut.span is not None and cut.span != loc:
        related.append(Related(cut.span, "the parameters are frozen here", "note"))
    if loc != span:
        related.append(Related(span, f"{API_TEXT.get(api, api)} raises here", "backward"))
    if cut.kind == "nograd" and cut.region is not None and cut.region != loc:
        related.append(Related(cut.region, "gradients are disabled here", "note"))
    if cut.kind == "nograd" and cut.region == loc:
        at = self._frame_span(cut.stack, cut.span)
        if at is not None and at != loc and at != span:
            related.append(Related(at, "computed here, without grad", "note"))
    if _in_callee(self, cut):
        call = self._frame_span(cut.stack, cut.span)
        if call is not None and call not in (loc, span) and all(r.span != call for r in related):
            related.append(Related(call, "reached through this call", "note"))
        if cut.kind == "nondiff" and cut.span is not None and cut.span != loc:
            related.append(Related(cut.span, f"{cut.what} here is not differentiable", "note"))
    if cut.kind == "rewrap" and cut.origin is not None and cut.origin.span is not None:
        o = self._frame_span(cut.origin.stack, cut.origin.span)
        if o is not None and o != loc:
            related.append(Related(o, f"{cut.origin.what} leaves autograd here", "note"))
    element = f"element {index} of tensors does not require grad" if api != "autograd.grad" or True else ""
    self.emit(Event("no_grad_backward", loc, {
        "name": info.name or "tensor", "state": "does not require grad",
        "why": why_no_grad(self, cut, cut.span if cut.kind == "nondiff" and _in_callee(self, cut) or unfreeze
                           else loc) + (f"; `{_line_text(self, unfreeze)}` only sets a Python attribute on the "
                                        "module, its parameters stay frozen" if unfreeze is not None else ""),
        "outcome": f"{API_TEXT.get(api, api)} at line {span.row} raises ({element})"
        if cut.sure else f"unless something this analysis cannot see adds a graph, {API_TEXT.get(api, api)} "
                         f"at line {span.row} raises ({element})"},
        related=tuple(related), fix_facts={"cut_kind": cut.kind, "backward_span": span, "cut_span": loc,
                                            "region": _region_kind(self, cut.region) if cut.region == loc else ""},
        severity=None if cut.sure else 3))
    if cut.sure:
        _halt()


def _line_text(self: Any, span: Span) -> str:
    return self.src.line(span.row).strip()


def _missed_unfreeze(self: Any, st: State, cut: Cut) -> Optional[Span]:
    """For a loss whose parameters are all frozen: the ``module.requires_grad = True`` meant
    to unfreeze some of them (it set a plain attribute), if their parameters are still frozen."""
    if cut.kind != "frozen" or not self.attr_unfreeze:
        return None
    for tid, at in self.attr_unfreeze.items():
        info = st.t.get(tid)
        if info is not None and info.rg is False:
            return at
    return None


def _in_callee(self: Any, cut: Cut) -> bool:
    """Was the gradient path cut inside a function the current frame called?"""
    return len(cut.stack) > len(self.call_spans)


def _cut_site(self: Any, st: State, root: TensorV, cut: Cut) -> Optional[Span]:
    """The line a fix changes for a loss whose gradient path was cut.

    A cut made right here is that line. A cut inside a helper this frame called is the line
    in the helper (the `.item()`, `torch.tensor(...)`, `.detach()` to remove) — except a
    non-differentiable op (a comparison, `argmax`, `round`): a helper that returns one
    (thresholded predictions, indices) is rarely wrong; the mistake is the loss built from
    it here, so the loss's own line (when it is made in this frame) is the one to change."""
    if cut.span is None or not _in_callee(self, cut):
        return self._frame_span(cut.stack, cut.span)
    if cut.kind == "nondiff":
        made = st.t[root.tid].created if root.tid in st.t else None
        if made is not None and self.in_current_function(made):
            return made
        return self._frame_span(cut.stack, cut.span)
    return cut.span


def _region_kind(self: Any, region: Optional[Span]) -> str:
    if region is None or self.foreign_stack:
        return ""
    line = self.src.line(region.row).lstrip()
    return "decorator" if line.startswith("@") else "with" if line.startswith(("with ", "async with ")) else "call"


def report_number_backward(self: Any, st: State, num: Any, node: ast.AST) -> None:
    span = self.span_of(node)
    cut: Cut = num.cut
    loc = self._frame_span(cut.stack, cut.span) or span
    if loc != span and self.branch_conflict(loc, span):
        return
    self.emit(Event("no_grad_backward", loc, {
        "name": self.text_of(node.value) if isinstance(node, ast.Attribute) else "value",
        "state": "is a Python number",
        "why": why_no_grad(self, cut, loc) if cut.kind == "item" else f"it holds values taken by {cut.what}",
        "outcome": f"`.backward()` at line {span.row} raises AttributeError (a number has no `backward`)"},
        related=(Related(span, "raises here", "backward"),) if loc != span else (),
        fix_facts={"cut_kind": "number", "backward_span": span, "cut_span": loc}))
    _halt()


# --------------------------------------------------------------------------- GW703
def check_grad_inputs(self: Any, st: State, roots: Sequence[TensorV], inputs: Value, allow: Any, span: Span) -> None:
    """``torch.autograd.grad(outputs, inputs)``: every input must require grad, and (unless
    ``allow_unused=True``) be reached by the outputs' graph."""
    ins = self.slot_tensors(st, inputs)
    if not ins:
        return
    for i, x in enumerate(ins):
        xi = st.t.get(x.tid)
        if xi is None or xi.rg is not False:
            continue
        cut = self.cuts.get(x.tid)
        if cut is None or not cut.sure:
            continue
        made = self._frame_span(cut.stack, cut.span) if cut.kind != "data" else xi.created
        if made is not None and made != span and self.branch_conflict(made, span):
            continue
        # reported where the input is made: that is where `requires_grad_()` (or no detach) belongs
        where = made or span
        self.emit(Event("grad_input_unused", where, {
            "name": xi.name or f"inputs[{i}]", "index": i,
            "problem": f"does not require grad (\"One of the differentiated Tensors does not require grad\" at line "
                       f"{span.row})"},
            related=(Related(span, "`torch.autograd.grad` raises here", "backward"),) if where != span else (),
            fix_facts={"reason": "no_grad", "call_span": span}))
        _halt()
    if allow is True:
        return
    nodes = []
    for r in roots:
        ri = st.t.get(r.tid)
        if ri is not None and ri.grad_fn is not None:
            nodes.append(ri.grad_fn)
    if not nodes or len(nodes) != len(roots):
        return
    walk = walk_nodes(nodes)
    if any(n.id in self.open_nodes for n in walk):
        return
    leaves = {t for n in walk for t in n.leaves}
    ids = {n.id for n in walk}
    for i, x in enumerate(ins):
        xi = st.t.get(x.tid)
        if xi is None or xi.rg is not True or x.tid in self.fake_leaves:
            continue
        if xi.grad_fn is None:
            if not xi.leaf:
                continue
            used = x.tid in leaves or self.leaf_root(st, x.tid) in leaves
        else:
            used = xi.grad_fn.id in ids
        if used:
            continue
        made = self._node_frame_span(xi)
        related = (Related(made, f"`{xi.name or 'it'}` is made here; the outputs are not computed from it",
                           "created"),) if made is not None and made != span else ()
        self.emit(Event("grad_input_unused", span, {
            "name": xi.name or f"inputs[{i}]", "index": i,
            "problem": "is not used in the graph of the outputs (\"appears to not have been used in the graph\")"},
            related=related, fix_facts={"reason": "unused", "call_span": span}))
        _halt()


# --------------------------------------------------------------------------- GW704 / GW705 / GW706
def known_nonleaf(self: Any, st: State, tid: int) -> bool:
    """A tensor certainly computed by an op from tensors this analysis knows (not from an
    argument of unknown origin, which may not even be a tensor)."""
    info = st.t.get(tid)
    return info is not None and info.grad_fn is not None and info.rg is True and tid not in self.unknown_derived \
        and info.grad_fn.id not in self.open_nodes


def check_requires_grad_change(self: Any, st: State, t: TensorV, flag: Value, node: ast.AST, method: bool) -> None:
    info = st.t.get(t.tid)
    if info is None or not known_nonleaf(self, st, t.tid):
        return
    b = self.truth_of(flag)
    if method and b is not False:
        return  # requires_grad_(True) on a tensor that already requires grad: allowed
    maybe = t.tid in self.maybe_leaf
    span = self.span_of(node)
    made = self._node_frame_span(info)
    related = (Related(made, f"`{info.name or 'it'}` is computed here (it has a grad_fn: not a leaf)", "created"),) \
        if made is not None and made != span else ()
    how = f"`.requires_grad_({b})`" if method else f"`.requires_grad = {b if b is not None else '...'}`"
    self.emit(Event("requires_grad_nonleaf", span, {
        "name": info.name or "tensor", "how": how, "made_line": made.row if made else "?",
        "cond": " (if `.to()` copied it; on the same device and dtype it is still the leaf)" if maybe else ""},
        related=related, fix_facts={"flag": b, "method": method, "stmt_span": span},
        severity=3 if maybe else None))
    if not maybe:
        _halt()


def check_grad_read(self: Any, st: State, t: TensorV, node: ast.AST) -> None:
    info = st.t.get(t.tid)
    if info is None or not known_nonleaf(self, st, t.tid) or t.tid in self.retained:
        return
    maybe = t.tid in self.maybe_leaf
    span = self.span_of(node)
    made = self._node_frame_span(info) or span
    arith = bool(getattr(node, "_gw_arith", False)) and not maybe  # `w -= lr * w.grad`: None * float
    self.emit(Event("grad_nonleaf", made, {
        "name": info.name or "tensor", "read_line": span.row,
        "cond": " (if `.to()` copied it: on the same device and dtype it is the leaf itself)" if maybe else
        f"; the arithmetic with it at line {span.row} raises TypeError" if arith else ""},
        related=(Related(span, "`.grad` is read here: it is None", "note"),) if made != span else (),
        fix_facts={"read_span": span, "name": info.name}, severity=3 if maybe else 1 if arith else None))


def check_optimizer_params(self: Any, st: State, obj: ObjV, node: ast.AST) -> None:
    tids = _params_of(st, obj)
    span = self.span_of(node)
    for tid in tids:
        info = st.t.get(tid)
        if info is None or not known_nonleaf(self, st, tid) or tid in self.retained:
            continue
        maybe = tid in self.maybe_leaf
        made = self._node_frame_span(info) or span
        self.emit(Event("optimize_nonleaf", made, {
            "name": info.name or "tensor", "opt_line": span.row,
            "cond": " (if `.to()` copied it)" if maybe else ""},
            related=(Related(span, "the optimizer raises ValueError here", "call"),) if made != span else (),
            fix_facts={"opt_span": span, "name": info.name}, severity=3 if maybe else None))
        if not maybe:
            _halt()
        return


def _plain_tensors(self: Any, st: State, obj: ObjV, tids: Sequence[int], node: ast.AST, span: Span) -> None:
    """Some of an optimizer's tensors train, others were created without requires_grad and
    never changed that: the step silently skips those (once per optimizer)."""
    if obj.oid in self.plain_reported:
        return
    for tid in tids:
        info = st.t.get(tid)
        cut = self.cuts.get(tid)
        if (info is None or info.rg is not False or info.param or cut is None or cut.kind != "data"
                or not cut.sure or tid in self.manual_grads or info.created is None):
            continue
        self.plain_reported.add(obj.oid)
        self.emit(Event("optimize_plain_tensor", info.created, {
            "name": _bound_name(self, info.created) or info.name or "tensor",
            "opt": self.receiver_text(node) or "optimizer", "step_line": span.row},
            related=(Related(span, "this step leaves it unchanged", "step"),)))
        return


def _bound_name(self: Any, span: Span) -> str:
    """``self.W`` for a tensor made on the line ``self.W = init.clone()`` (the name the user
    knows it by, rather than the name of what it was copied from)."""
    if self.foreign_stack:
        return ""
    m = _BOUND.match(self.src.line(span.row))
    return m.group(1) if m else ""


_BOUND = re.compile(r"\s*([A-Za-z_][\w.]*)\s*=(?!=)")  # `name = ...` / `obj.attr = ...`, not `==`


def _params_of(st: State, obj: ObjV) -> Tuple[int, ...]:
    p = st.attrs(obj.oid).get("__params__")
    return tuple(p.value) if isinstance(p, ConstV) and isinstance(p.value, tuple) else ()


# --------------------------------------------------------------------------- GW717
def check_inference_saved(self: Any, st: State, opname: str, span: Span, inputs: Sequence[TensorV],
                          saved: Sequence[Any]) -> None:
    """An op recorded for backward saves a tensor made under ``torch.inference_mode()``:
    torch raises "Inference tensors cannot be saved for backward" at that op."""
    for sv in saved:
        region = self.inference.get(sv.tid)
        if region is None or getattr(sv, "maybe", False):
            continue
        info = st.t.get(sv.tid)
        self.inference_reported = True
        made = info.created if info is not None else None
        related = [Related(self._frame_span(tuple(self.call_spans), span) or span,
                           f"`{opname}` saves it for backward here and raises", "save")]
        if made is not None and made != region:
            related.insert(0, Related(made, "made here, an inference tensor", "created"))
        name = (info.name if info is not None else "") or (_bound_name(self, made) if made is not None else "")
        self.emit(Event("inference_saved", region, {
            "name": f"`{name}`" if name else f"the value of line {made.row}" if made is not None else "a tensor",
            "op": opname, "op_line": span.row},
            related=tuple(related)))
        _halt()
        return


# --------------------------------------------------------------------------- GW715
def check_module_requires_grad(self: Any, st: State, obj: ObjV, value: Value, target: ast.Attribute,
                               stmt: ast.AST) -> None:
    """``module.requires_grad = flag``: ``nn.Module`` has no such property, so this only sets a
    plain Python attribute; the parameters keep their own ``requires_grad``."""
    if _defines_requires_grad(self):
        return  # the code gives modules a `requires_grad` of its own: the attribute may be read
    params = self.module_params(obj, st)
    if not params:
        return  # no parameter to (un)freeze: harmless
    span = self.span_of(stmt)
    flag = self.truth_of(value)
    mod = self.text_of(target.value)
    if flag is True:
        for _, p in params:
            self.attr_unfreeze.setdefault(p.tid, span)
    self.emit(Event("module_requires_grad_attr", span, {
        "module": mod, "flag": self.text_of(stmt.value) if isinstance(stmt, ast.Assign) else "...",
        "n": len(params), "effect": "stay frozen" if flag is True else "keep training" if flag is False
        else "keep their own `requires_grad`"},
        fix_facts={"module_text": mod, "value_text": self.text_of(stmt.value) if isinstance(stmt, ast.Assign) else ""}))


def _defines_requires_grad(self: Any) -> bool:
    """Does this file give a class its own ``requires_grad`` (a method, a class attribute,
    or a read of ``self.requires_grad``)? Then assigning it on a module may be meant."""
    cached = self.own_requires_grad
    if cached is None:
        cached = False
        for node in ast.walk(self.tree):
            if isinstance(node, ast.ClassDef):
                for item in ast.walk(node):
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "requires_grad":
                        cached = True
                    elif (isinstance(item, ast.Attribute) and item.attr == "requires_grad"
                          and isinstance(item.ctx, ast.Load) and isinstance(item.value, ast.Name)
                          and item.value.id == "self"):
                        cached = True
                    elif isinstance(item, ast.Name) and item.id == "requires_grad" and isinstance(item.ctx, ast.Store):
                        cached = True
        self.own_requires_grad = cached
    return cached


# --------------------------------------------------------------------------- GW707 / GW710
def check_step(self: Any, st: State, obj: ObjV, node: ast.AST) -> None:
    tids = _params_of(st, obj)
    span = self.span_of(node)
    if tids:
        cuts = []
        for tid in tids:
            info = st.t.get(tid)
            cut = self.cuts.get(tid) if info is not None and info.rg is False else None
            if cut is None or not cut.sure or tid in self.manual_grads:
                cuts = []
                break
            cuts.append((tid, cut))
        if cuts:
            site = self.opt_sites.get(obj.oid, span)
            tid, cut = cuts[0]
            where = self._frame_span(cut.stack, cut.span) if cut.kind != "data" else st.t[tid].created
            related = [Related(span, "this step changes nothing", "step")]
            if where is not None and where != site:
                related.append(Related(where, "frozen here" if cut.kind == "frozen" else
                                       "created here without requires_grad=True", "created"))
            self.emit(Event("optimize_no_grad", site, {
                "opt": self.receiver_text(node) or "optimizer", "n": len(tids),
                "what": "frozen" if cut.kind == "frozen" else "created without requires_grad=True"
                if cut.kind == "data" else "cut from the graph"},
                related=tuple(related)))
        else:
            _plain_tensors(self, st, obj, tids, node, span)
    if not st.loop_ctx:
        return
    lid, k = st.loop_ctx[-1]
    if k < 2 or lid in self.zeroed_loops:
        return
    for tid in tids:
        recs = st.grads.get(tid, ())
        seen = {}
        for rec in recs:
            bspan = rec[0]
            if bspan in seen:
                # decided when the analysis ends: a reset later in the loop body (or in a
                # later iteration, gradient accumulation) makes it fine
                # reported at the backward: the reset belongs before it (the line the fix
                # changes); the step that consumes the sum is the related place
                self.pending_accum.append((lid, Event("grads_accumulate", bspan, {
                    "opt": self.receiver_text(node) or "optimizer", "step_line": span.row},
                    related=(Related(span, "this step uses the sum of every backward so far", "step"),),
                    fix_facts={"step_span": span, "opt": self.receiver_text(node) or ""})))
                return
            seen[bspan] = rec


# --------------------------------------------------------------------------- GW708
def check_checkpoint(self: Any, qual: str, args: List[Value], kwargs: dict, st: State, node: ast.AST) -> bool:
    """Reentrant ``checkpoint`` (the default in torch 2.13 when ``use_reentrant`` is not
    passed) returns a tensor without a graph when none of its inputs requires grad: the
    parameters of the checkpointed function get no gradient."""
    flag = kwargs.get("use_reentrant")
    if flag is not None and self.truth_of(flag) is not True:
        return False
    if not args:
        return False
    fn = args[0]
    inputs = args[2:3] if qual.endswith("checkpoint_sequential") else args[1:]
    tensors = [x for a in inputs for x in self.slot_tensors(st, a)]
    if not tensors:
        return False
    for x in tensors:
        xi = st.t.get(x.tid)
        if xi is None or xi.rg is not False:
            return False
        c = self.cuts.get(x.tid)
        if c is None or not c.sure:
            return False
    params = _trainable(self, st, fn)
    if not params:
        return False
    span = self.span_of(node)
    self.emit(Event("checkpoint_no_grad", span, {
        "fn": self.text_of(node.args[0]) if isinstance(node, ast.Call) and node.args else "the function",
        "n": len(params), "explicit": flag is not None},
        fix_facts={"call_span": span}))
    return True


def _trainable(self: Any, st: State, fn: Value) -> List[int]:
    objs: List[ObjV] = []
    if isinstance(fn, ObjV):
        objs.append(fn)
    elif isinstance(fn, RefV) and fn.kind == "method" and isinstance(fn.bound, ObjV):
        objs.append(fn.bound)
    elif isinstance(fn, SeqV):
        objs.extend(x for x in st.lists.get(fn.lid, ()) if isinstance(x, ObjV))
    out: List[int] = []
    for o in objs:
        if not self.is_module_obj(o, st):
            continue
        for _, p in self.module_params(o, st):
            info = st.t.get(p.tid)
            if info is not None and info.rg is True:
                out.append(p.tid)
    return out


# --------------------------------------------------------------------------- GW709
def check_backward_uses_grad(self: Any, info: Any) -> None:
    """A custom ``Function.backward`` whose returned gradients do not depend on the incoming
    gradient: the chain rule is dropped (right only when the output is the loss itself)."""
    bwd = info.methods.get("backward")
    if bwd is None or not self.is_static(bwd) or self.foreign_stack:
        return
    params = [a.arg for a in list(bwd.args.posonlyargs) + list(bwd.args.args)][1:]
    if bwd.args.vararg is not None:
        params.append(bwd.args.vararg.arg)
    if not params:
        return

    nodes = list(_own_nodes(bwd))
    tainted = set(params)
    changed = True
    while changed:
        changed = False
        for n in nodes:
            targets: List[ast.AST] = []
            value: Optional[ast.AST] = None
            if isinstance(n, ast.Assign):
                targets, value = list(n.targets), n.value
            elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and n.value is not None:
                targets, value = [n.target], n.value
                if isinstance(n, ast.AugAssign) and _mentions(n.target, tainted):
                    value = n.target
            elif isinstance(n, ast.For):
                targets, value = [n.target], n.iter
            elif isinstance(n, ast.NamedExpr):
                targets, value = [n.target], n.value
            elif isinstance(n, ast.Call) and \
                    any(_mentions(a, tainted) for a in list(n.args) + [k.value for k in n.keywords]):
                # x.mul_(grad): x now depends on grad; kernel(grad, out_buf): a call that gets the
                # gradient may fill every buffer passed beside it (CUDA kernels' out-arguments)
                targets = [n.func.value] if isinstance(n.func, ast.Attribute) else []
                targets += [a for a in list(n.args) + [k.value for k in n.keywords] if isinstance(a, ast.Name)]
                value = n
            elif isinstance(n, (ast.With,)):
                for item in n.items:
                    if item.optional_vars is not None and _mentions(item.context_expr, tainted):
                        targets.append(item.optional_vars)
                value = n.items[0].context_expr if targets else None
            if value is None or not _mentions(value, tainted):
                continue
            for tgt in targets:
                for name in _stored_names(tgt):
                    if name not in tainted:
                        tainted.add(name)
                        changed = True
    zeros = {name for n in nodes if isinstance(n, ast.Assign) and _no_gradient(n.value)
             for t in n.targets for name in _stored_names(t)}
    zeros -= tainted
    returns = [n for n in nodes if isinstance(n, ast.Return) and n.value is not None]
    if not returns:
        return
    for ret in returns:
        elts = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        for e in elts:
            if _no_gradient(e) or _mentions(e, tainted) or isinstance(e, ast.Name) and e.id in zeros:
                continue
            if isinstance(e, ast.Starred):
                continue
            self.emit(Event("backward_ignores_grad", self.span_of(e), {
                "fn": info.name, "grad": params[0], "expr": self.text_of(e)},
                fix_facts={"expr_span": self.span_of(e), "grad": params[0]}))
            return


def _mentions(node: ast.AST, names: set) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _stored_names(target: ast.AST) -> List[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [x for e in target.elts for x in _stored_names(e)]
    if isinstance(target, (ast.Attribute, ast.Subscript)):
        base = target.value
        while isinstance(base, (ast.Attribute, ast.Subscript)):
            base = base.value
        return [base.id] if isinstance(base, ast.Name) else []
    if isinstance(target, ast.Starred):
        return _stored_names(target.value)
    return []


_ZEROS = ("zeros_like", "zeros", "new_zeros", "zero_")


def _no_gradient(e: ast.AST) -> bool:
    """None, a constant, or an explicit zero gradient (``torch.zeros_like(x)``)."""
    if isinstance(e, ast.Constant):
        return True
    if isinstance(e, ast.Call):
        f = e.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in _ZEROS
    return False


# --------------------------------------------------------------------------- branch feasibility
def branch_conflict(self: Any, a: Span, b: Span) -> bool:
    """True when ``a`` and ``b`` lie in opposite branches of ``if`` statements with the same
    test in the same function (``if train: ... else: <no_grad>`` ... ``if train: backward``):
    no single run executes both."""
    if self.foreign_stack:
        return False
    index = self._if_index
    if index is None:
        index = self._if_index = _build_if_index(self.tree)
    ina = [(test, fn, side) for test, body, orelse, fn in index for side, rng in (("b", body), ("o", orelse))
           if rng[0] <= a.row <= rng[1]]
    if not ina:
        return False
    inb = [(test, fn, side) for test, body, orelse, fn in index for side, rng in (("b", body), ("o", orelse))
           if rng[0] <= b.row <= rng[1]]
    for ta, fa, sa in ina:
        for tb, fb, sb in inb:
            if fa != fb:
                continue
            if ta == tb and sa != sb:
                return True
            if (ta == "not " + tb or tb == "not " + ta) and sa == sb:
                return True
    return False


def _build_if_index(tree: ast.AST) -> List[Tuple[str, Tuple[int, int], Tuple[int, int], int]]:
    out: List[Tuple[str, Tuple[int, int], Tuple[int, int], int]] = []

    def visit(node: ast.AST, fn: int) -> None:
        for child in ast.iter_child_nodes(node):
            f = id(child) if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else fn
            if isinstance(child, ast.If) and child.body:
                test = child.test
                key = ("not " + ast.dump(test.operand)) if isinstance(test, ast.UnaryOp) and \
                    isinstance(test.op, ast.Not) else ast.dump(test)
                body = (child.body[0].lineno, child.body[-1].end_lineno or child.body[-1].lineno)
                orelse = (child.orelse[0].lineno, child.orelse[-1].end_lineno or child.orelse[-1].lineno) \
                    if child.orelse else (0, -1)
                out.append((key, body, orelse, f))
            visit(child, f)

    visit(tree, 0)
    return out
