"""The checks of gradient flow around training: ``requires_grad`` changed on a non-leaf or a
module, ``.grad`` of a non-leaf, optimizers over frozen or non-leaf tensors and ``step()``
without gradients, reentrant ``checkpoint`` without inputs that require grad, inference tensors
saved for backward, and a custom backward that ignores its incoming gradient. Same contract as
engine/checks/flowchecks.py: a check that proves torch raises ends the path (``Halt``).
"""
from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.checks.flowfacts import optimizer_params
from gradwarden.engine.checks.flowviews import _halt
from gradwarden.engine.checks.plainattrs import check_unregistered_tensors
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.domain.returncount import tuple_elements
from gradwarden.engine.events import Event
from gradwarden.engine.front.body import own_nodes as _own_nodes
from gradwarden.engine.state.model import ObjV, RefV, SeqV, State, TensorV, Value


# --------------------------------------------------------------------------- GW704 / GW705 / GW706
def backward_site(rec: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """Which backward a gradient record (``st.grads``: its span, sequence, root nodes) came from,
    as a loop sees it: the same statement on the same losses. A backward in a helper
    (``accelerator.backward(loss)``) called for two losses in one iteration is two sites (its
    roots were built at other lines or through other calls); the same call in the next
    iteration is the same site again (gradients summed over iterations)."""
    return (rec[0], tuple((n.span, n.stack) for n in rec[2]))


def known_nonleaf(self: Any, st: State, tid: int) -> bool:
    """A tensor certainly computed by an op from tensors this analysis knows (not from an
    argument of unknown origin, which may not even be a tensor)."""
    info = st.t.get(tid)
    return info is not None and info.grad_fn is not None and info.rg is True and tid not in self.flow.unknown_derived \
        and info.grad_fn.id not in self.flow.open_nodes


def _plain_tensors(self: Any, st: State, obj: ObjV, tids: Sequence[int], node: ast.AST, span: Span) -> None:
    """Some of an optimizer's tensors train, others were created without requires_grad and
    never changed that: the step silently skips those (once per optimizer)."""
    if obj.oid in self.flow.plain_reported:
        return
    for tid in tids:
        info = st.t.get(tid)
        cut = self.flow.cuts.get(tid)
        if (info is None or info.rg is not False or info.param or cut is None or cut.kind != "data"
                or not cut.sure or tid in self.flow.manual_grads or info.created is None):
            continue
        self.flow.plain_reported.add(obj.oid)
        self.it.emit(Event("optimize_plain_tensor", info.created, {
            "name": _bound_name(self, info.created) or info.name or "tensor",
            "opt": self.it.tensors.receiver_text(node) or "optimizer", "step_line": span.row},
            related=(Related(span, "this step leaves it unchanged", "step"),)))
        return


def _arith_grad_reads(self: Any, scope: ast.AST) -> Any:
    """The ``.grad`` reads of ``scope`` (a function, or the module) that its arithmetic uses:
    an operand (``total = total + x.grad``, ``x - lr * x.grad``) or an augmented value
    (``total += x.grad``)."""
    cache = self.flow.__dict__.setdefault("arith_grad_reads", {})
    found = cache.get(id(scope))
    if found is None:
        found = set()
        for n in ast.walk(scope):
            operands = (n.left, n.right) if isinstance(n, ast.BinOp) else (n.value,) if isinstance(n, ast.AugAssign) else ()
            found.update(id(o) for o in operands if isinstance(o, ast.Attribute) and o.attr == "grad")
        cache[id(scope)] = found
    return found


def _made_in_helper(self: Any, info: Any) -> Optional[Span]:
    """The op that made a tensor, when a function of another module of the project, called
    from the code now running, made it by that op itself (``return torch.randn(...,
    requires_grad=True) * t`` in ``latent.py``): the line whose change fixes it, in that file.
    None when the op lies in this file or deeper in further calls."""
    n = info.grad_fn
    here = self.it.call_spans
    if n is None or n.span is None or len(n.stack) != len(here) + 1 or tuple(n.stack[:len(here)]) != tuple(here):
        return None
    current = str(self.it.foreign_stack[-1][0].path) if self.it.foreign_stack else None
    return n.span if n.span.file is not None and n.span.file != current else None


def _bound_name(self: Any, span: Span) -> str:
    """``self.W`` for a tensor made on the line ``self.W = init.clone()`` (the name the user
    knows it by, rather than the name of what it was copied from)."""
    if self.it.foreign_stack:
        return ""
    m = _BOUND.match(self.it.src.line(span.row))
    return m.group(1) if m else ""


_BOUND = re.compile(r"\s*([A-Za-z_][\w.]*)\s*=(?!=)")  # `name = ...` / `obj.attr = ...`, not `==`


def _defines_requires_grad(self: Any) -> bool:
    """Does this file give a class its own ``requires_grad`` (a method, a class attribute,
    or a read of ``self.requires_grad``)? Then assigning it on a module may be meant."""
    cached = self.flow.own_requires_grad
    if cached is None:
        cached = False
        for node in ast.walk(self.it.tree):
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
        self.flow.own_requires_grad = cached
    return cached


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
        if not self.it.modules.is_module_obj(o, st):
            continue
        for _, p in self.it.modules.module_params(o, st):
            info = st.t.get(p.tid)
            if info is not None and info.rg is True:
                out.append(p.tid)
    return out


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


class TrainingChecks:
    """The ``training`` role: checks of parameters, optimizers and custom backwards."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def check_requires_grad_change(self: Any, st: State, t: TensorV, flag: Value, node: ast.AST, method: bool) -> None:
        info = st.t.get(t.tid)
        if info is None or not known_nonleaf(self, st, t.tid):
            return
        b = self.it.ev.truth_of(flag)
        if method and b is not False:
            return  # requires_grad_(True) on a tensor that already requires grad: allowed
        maybe = t.tid in self.flow.maybe_leaf
        span = self.it.span_of(node)
        made = self.flow._node_frame_span(info)
        related = (Related(made, f"`{info.name or 'it'}` is computed here (it has a grad_fn: not a leaf)", "created"),) \
            if made is not None and made != span else ()
        how = f"`.requires_grad_({b})`" if method else f"`.requires_grad = {b if b is not None else '...'}`"
        self.it.emit(Event("requires_grad_nonleaf", span, {
            "name": info.name or "tensor", "how": how, "made_line": made.row if made else "?",
            "cond": " (if `.to()` copied it; on the same device and dtype it is still the leaf)" if maybe else ""},
            related=related, fix_facts={"flag": b, "method": method, "stmt_span": span},
            severity=3 if maybe else None))
        if not maybe:
            _halt()

    def check_grad_read(self: Any, st: State, t: TensorV, node: ast.AST) -> None:
        info = st.t.get(t.tid)
        if info is None or not known_nonleaf(self, st, t.tid) or t.tid in self.flow.retained:
            return
        maybe = t.tid in self.flow.maybe_leaf
        span = self.it.span_of(node)
        made = self.flow._node_frame_span(info) or span
        arith = bool(getattr(node, "_gw_arith", False)) and not maybe  # `w -= lr * w.grad`: None * float
        self.it.emit(Event("grad_nonleaf", made, {
            "name": info.name or "tensor", "read_line": span.row,
            "cond": " (if `.to()` copied it: on the same device and dtype it is the leaf itself)" if maybe else
            f"; the arithmetic with it at line {span.row} raises TypeError" if arith else ""},
            related=(Related(span, "`.grad` is read here: it is None", "note"),) if made != span else (),
            fix_facts={"read_span": span, "name": info.name}, severity=3 if maybe else 1 if arith else None))

    def check_grad_accumulated(self: Any, st: State, t: TensorV, node: ast.AST) -> None:
        """GW729: the ``.grad`` of a leaf no optimizer holds (an input made to require grad:
        saliency, an attack, an inversion) read in a loop whose backward adds into it every
        iteration while nothing resets it: the read gets the sum of every backward so far.
        Decided at the end of the run (a reset later in the loop makes it fine)."""
        if not st.loop_ctx:
            return
        lid, k = st.loop_ctx[-1]
        info = st.t.get(t.tid)
        if k < 2 or lid in self.flow.zeroed_loops or info is None or not info.leaf or info.rg is not True or \
                info.param or t.tid in self.flow.manual_grads:
            return
        if any(t.tid in params for params in st.meta.get("optimizers", {}).values()) or st.writes.get(info.counter):
            return  # an optimizer's parameter (GW710 at its step), or weights the loop updates itself
        if id(node) not in _arith_grad_reads(self, self.it.call_stack[-1] if self.it.call_stack else self.it.tree):
            return  # read for a print or a log: the running sum is shown, nothing is computed from it
        seen = set()
        for rec in st.grads.get(t.tid, ()):
            if backward_site(rec) in seen:
                span = self.it.span_of(node)
                name = self.it.text_of(node.value) if isinstance(node, ast.Attribute) else info.name
                self.flow.pending_accum.append((lid, Event("input_grad_accumulates", rec[0], {
                    "name": name or "tensor", "read_line": span.row},
                    related=(Related(span, "this read gets the sum of every backward so far", "note"),))))
                return
            seen.add(backward_site(rec))

    def check_optimizer_params(self: Any, st: State, obj: ObjV, node: ast.AST) -> None:
        tids = optimizer_params(st, obj.oid)
        span = self.it.span_of(node)
        for tid in tids:
            info = st.t.get(tid)
            if info is None or not known_nonleaf(self, st, tid) or tid in self.flow.retained:
                continue
            maybe = tid in self.flow.maybe_leaf
            made = self.flow._node_frame_span(info) or span
            related = (Related(span, "the optimizer raises ValueError here", "call"),) if made != span else ()
            helper = _made_in_helper(self, info)
            if helper is not None:  # the op in a helper of another module, called here: the fix goes there
                made, related = helper, related + (Related(self.flow._node_frame_span(info) or span,
                                                           "the helper that makes it is called here", "call"),)
            self.it.emit(Event("optimize_nonleaf", made, {
                "name": info.name or "tensor", "opt_line": span.row,
                "cond": " (if `.to()` copied it)" if maybe else ""},
                related=related,
                fix_facts={"opt_span": span, "name": info.name}, severity=3 if maybe else None))
            if not maybe:
                _halt()
            return

    # --------------------------------------------------------------------------- GW717
    def check_inference_saved(self: Any, st: State, opname: str, span: Span, inputs: Sequence[TensorV],
                              saved: Sequence[Any]) -> None:
        """An op recorded for backward saves a tensor made under ``torch.inference_mode()``:
        torch raises "Inference tensors cannot be saved for backward" at that op."""
        for sv in saved:
            region = self.flow.inference.get(sv.tid)
            if region is None or getattr(sv, "maybe", False):
                continue
            info = st.t.get(sv.tid)
            self.flow.inference_reported = True
            made = info.created if info is not None else None
            related = [Related(self.flow._frame_span(tuple(self.it.call_spans), span) or span,
                               f"`{opname}` saves it for backward here and raises", "save")]
            if made is not None and made != region:
                related.insert(0, Related(made, "made here, an inference tensor", "created"))
            name = (info.name if info is not None else "") or (_bound_name(self, made) if made is not None else "")
            self.it.emit(Event("inference_saved", region, {
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
        params = self.it.modules.module_params(obj, st)
        if not params:
            return  # no parameter to (un)freeze: harmless
        span = self.it.span_of(stmt)
        flag = self.it.ev.truth_of(value)
        mod = self.it.text_of(target.value)
        if flag is True:
            for _, p in params:
                self.flow.attr_unfreeze.setdefault(p.tid, span)
        self.it.emit(Event("module_requires_grad_attr", span, {
            "module": mod, "flag": self.it.text_of(stmt.value) if isinstance(stmt, ast.Assign) else "...",
            "n": len(params), "effect": "stay frozen" if flag is True else "keep training" if flag is False
            else "keep their own `requires_grad`"},
            fix_facts={"module_text": mod, "value_text": self.it.text_of(stmt.value) if isinstance(stmt, ast.Assign) else ""}))

    # --------------------------------------------------------------------------- GW707 / GW710
    def check_step(self: Any, st: State, obj: ObjV, node: ast.AST) -> None:
        tids = optimizer_params(st, obj.oid)
        span = self.it.span_of(node)
        if tids and st.meta.get("mode_roots"):  # GW724: a step that trains BatchNorm/Dropout in eval mode
            self.flow.modes.at_step(st, tids, span)
        if tids:  # GW719: which of them the losses reached (engine/checks/reach.py)
            self.flow.reach.at_step(st, obj.oid, tids, span, self.flow.opt_sites.get(obj.oid, span),
                                    self.it.tensors.receiver_text(node) or "optimizer")
            check_unregistered_tensors(self, st, span)  # GW604 (engine/checks/plainattrs.py)
        if tids:
            cuts = []
            for tid in tids:
                info = st.t.get(tid)
                cut = self.flow.cuts.get(tid) if info is not None and info.rg is False else None
                if cut is None or not cut.sure or tid in self.flow.manual_grads:
                    cuts = []
                    break
                cuts.append((tid, cut))
            if cuts:
                site = self.flow.opt_sites.get(obj.oid, span)
                tid, cut = cuts[0]
                where = self.flow._frame_span(cut.stack, cut.span) if cut.kind != "data" else st.t[tid].created
                related = [Related(span, "this step changes nothing", "step")]
                if where is not None and where != site:
                    related.append(Related(where, "frozen here" if cut.kind == "frozen" else
                                           "created here without requires_grad=True", "created"))
                self.it.emit(Event("optimize_no_grad", site, {
                    "opt": self.it.tensors.receiver_text(node) or "optimizer", "n": len(tids),
                    "what": "frozen" if cut.kind == "frozen" else "created without requires_grad=True"
                    if cut.kind == "data" else "cut from the graph"},
                    related=tuple(related)))
            else:
                _plain_tensors(self, st, obj, tids, node, span)
        if not st.loop_ctx:
            return
        lid, k = st.loop_ctx[-1]
        if k < 2:
            return
        if lid in self.flow.zeroed_loops:
            _partly_zeroed(self, st, lid, tids, node, span)
            return
        for tid in tids:
            recs = st.grads.get(tid, ())
            seen = {}
            for rec in recs:
                bspan = rec[0]
                if backward_site(rec) in seen:
                    # decided when the analysis ends: a reset later in the loop body (or in a
                    # later iteration, gradient accumulation) makes it fine
                    # reported at the backward: the reset belongs before it (the line the fix
                    # changes); the step that consumes the sum is the related place
                    self.flow.pending_accum.append((lid, Event("grads_accumulate", bspan, {
                        "opt": self.it.tensors.receiver_text(node) or "optimizer", "step_line": span.row},
                        related=(Related(span, "this step uses the sum of every backward so far", "step"),),
                        fix_facts={"step_span": span, "opt": self.it.tensors.receiver_text(node) or ""})))
                    return
                seen[backward_site(rec)] = rec

    # --------------------------------------------------------------------------- GW708
    def check_checkpoint(self: Any, qual: str, args: List[Value], kwargs: dict, st: State, node: ast.AST) -> bool:
        """Reentrant ``checkpoint`` (the default in torch 2.13 when ``use_reentrant`` is not
        passed) returns a tensor without a graph when none of its inputs requires grad: the
        parameters of the checkpointed function get no gradient."""
        flag = kwargs.get("use_reentrant")
        if flag is not None and self.it.ev.truth_of(flag) is not True:
            return False
        if not args:
            return False
        fn = args[0]
        inputs = args[2:3] if qual.endswith("checkpoint_sequential") else args[1:]
        tensors = [x for a in inputs for x in self.it.graph.slot_tensors(st, a)]
        if not tensors:
            return False
        for x in tensors:
            xi = st.t.get(x.tid)
            if xi is None or xi.rg is not False:
                return False
            c = self.flow.cuts.get(x.tid)
            if c is None or not c.sure:
                return False
        params = _trainable(self, st, fn)
        if not params:
            return False
        span = self.it.span_of(node)
        self.it.emit(Event("checkpoint_no_grad", span, {
            "fn": self.it.text_of(node.args[0]) if isinstance(node, ast.Call) and node.args else "the function",
            "n": len(params), "explicit": flag is not None},
            fix_facts={"call_span": span}))
        return True

    # --------------------------------------------------------------------------- GW709
    def check_backward_uses_grad(self: Any, info: Any) -> None:
        """A custom ``Function.backward`` whose returned gradients do not depend on the incoming
        gradient: the chain rule is dropped (right only when the output is the loss itself)."""
        bwd = info.methods.get("backward")
        if bwd is None or not self.it.is_static(bwd) or self.it.foreign_stack:
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
            # (None,) * 12 and (None, None) + (Fn.apply(..., grad),): the elements of the tuple
            for e in tuple_elements(ret.value):
                if _no_gradient(e) or _mentions(e, tainted) or isinstance(e, ast.Name) and e.id in zeros:
                    continue
                if isinstance(e, ast.Starred):
                    continue
                self.it.emit(Event("backward_ignores_grad", self.it.span_of(e), {
                    "fn": info.name, "grad": params[0], "expr": self.it.text_of(e)},
                    fix_facts={"expr_span": self.it.span_of(e), "grad": params[0]}))
                return


def _others_cleared(st: State, tids: Sequence[int]) -> bool:
    """Another optimizer's parameters got one backward's gradient each since their last clearing,
    while this optimizer's add up: the loop's zeroing calls clear the other optimizer and miss this one
    (``encoder_optimizer.zero_grad()`` written twice, the decoder's never)."""
    ours = set(tids)
    for other in st.meta.get("optimizers", {}).values():
        rest = [t for t in other if t not in ours]
        recs = [[r[0] for r in st.grads.get(t, ())] for t in rest]
        if any(recs) and all(len(r) == len(set(r)) for r in recs if r):
            return True
    return False


def _summed_across(recs: Sequence[Tuple[Any, ...]], lid: int) -> bool:
    """Two of a tensor's gradient records come from one backward site and not both from the same
    iteration of loop ``lid``: the gradient sums over that loop's iterations. Two records of one
    iteration come from a loop nested in it (a backward per head into a shared trunk, the trunk
    stepped once after the heads): summed on purpose, and the iteration's zeroing clears them."""
    seen: Dict[Tuple[Any, ...], List[Any]] = {}
    for r in recs:
        its = {dict(n.loop_ctx).get(lid) for n in r[2]}
        it = its.pop() if len(its) == 1 else None
        prev = seen.setdefault(backward_site(r), [])
        if prev and (it is None or any(p is None or p != it for p in prev)):
            return True
        prev.append(it)
    return False


def _partly_zeroed(self: Any, st: State, lid: int, tids: Sequence[int], node: ast.AST, span: Span) -> None:
    """GW725: the loop zeroes gradients, but its zeroing call covers only some of what this optimizer
    steps (``model.zero_grad()`` with a temperature or a loss weight kept beside the model): the
    others' ``.grad`` holds two backwards of the loop by this step, while the covered ones hold one.
    Gradient accumulation (every parameter alike) is not this. Reported at the zeroing call: it is
    the line the fix changes (``optimizer.zero_grad()``)."""
    site = self.flow.zero_sites.get(lid)
    if site is None:
        return
    summed, cleared = [], 0
    for tid in tids:
        recs = st.grads.get(tid, ())
        if not recs:
            continue
        if _summed_across(recs, lid):
            summed.append(tid)
        else:
            cleared += 1
    if not summed or any(t in self.flow.manual_grads for t in summed):
        return
    if not cleared and not _others_cleared(st, tids):
        return  # every parameter alike and no other optimizer's cleared: accumulation, not a slip
    names = sorted({st.t[t].name or "a parameter" for t in summed if t in st.t})
    opt = self.it.tensors.receiver_text(node) or "optimizer"
    zspan, what = site
    if zspan in self.flow.partly_zeroed:
        return
    self.flow.partly_zeroed.add(zspan)
    self.flow.pending_accum.append((None, Event("grads_partly_zeroed", zspan, {
        "call": (what if "=" in what else f"{what}()") if what else "zero_grad()", "names": ", ".join(f"`{n}`" for n in names[:3]) +
        (f" and {len(names) - 3} more" if len(names) > 3 else ""), "opt": opt, "step_line": span.row},
        related=(Related(span, "this step uses their gradients summed over every iteration", "step"),))))
