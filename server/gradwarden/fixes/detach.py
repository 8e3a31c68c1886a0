"""``detach``: cut the graph where a value crosses from one backward to another. Unsafe by
nature (gradients stop flowing through the detached value).

Modes:

- ``stale_use`` (GW402): the use of a value whose graph an earlier backward freed. A value
  stored across iterations is detached where it is stored (``cache.append(h.detach())``); a
  carried attribute just before the use (``self.hidden = self.hidden.detach()``, tuples
  element-wise); a local name at the use (``lossG = (g + d.detach()).sum()``), or before the
  loop that re-accumulates it (``loss = loss.detach()`` before ``for ...: loss += ...``);
- ``assignment`` (GW403): the value computed before the loop is data: detach the assigned
  value (``Y = (X @ w + b).detach()``);
- ``later_loss`` (GW501/GW502): the later loss reaches the stepped model through a value
  computed before the step: detach that value where the later loss uses it
  (``disc(torch.sigmoid(pred_g.detach()))``);
- ``call_arg`` (GW503): ``netD(fake.detach())``;
- ``running_total`` (GW404): ``total += loss.detach()`` (refused when the total is backwarded).
"""
from __future__ import annotations

from typing import List, Optional, Set

import libcst as cst

from gradwarden.fixes import FixContext, realiser
from gradwarden.fixes._common import backward_roots, find_call_at, optimizer_model
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, base_of, dotted
from gradwarden.fixes._flow import ScopeIndex, operands, references


@realiser("detach")
def detach(ctx: FixContext) -> List[TextEdit]:
    mode = ctx.param("mode", "stale_use")
    fn = _MODES.get(mode)
    if fn is None:
        raise CannotFix(f"unknown detach mode {mode}")
    return fn(ctx)


def detach_expr(doc: Doc, node: cst.CSTNode) -> List[TextEdit]:
    parent = doc.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr.value == "detach":
        raise CannotFix("already detached")
    return doc.append_call(node, ".detach()")


def _is_tuple_valued(doc: Doc, name: str) -> bool:
    """Is ``name`` ever assigned a tuple literal, or unpacked as the state of an LSTM call
    (``out, self.hidden = self.lstm(...)``)?"""
    for node in doc.walk():
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if dotted(t.target) == name and isinstance(node.value, cst.Tuple):
                    return True
                if isinstance(t.target, cst.Tuple) and len(t.target.elements) == 2 and \
                        dotted(t.target.elements[1].value) == name and isinstance(node.value, cst.Call):
                    callee = (dotted(node.value.func) or "").lower()
                    if "lstm" in callee:
                        return True
    return False


def detached_value(doc: Doc, name: str) -> str:
    if _is_tuple_valued(doc, name):
        return f"tuple(h.detach() for h in {name})"
    return f"{name}.detach()"


# --------------------------------------------------------------------------- stale_use
def _stale_operands(ctx: FixContext, idx: ScopeIndex, expr: cst.CSTNode, stmt: cst.CSTNode) -> List[cst.CSTNode]:
    doc = ctx.doc
    skip = _self_names(doc, stmt)
    ops = [o for o in operands(doc, expr) if dotted(o) not in skip]
    if not ops:
        raise CannotFix("no operand at the use")
    hint = ctx.param("name")
    named = [o for o in ops if hint and (dotted(o) == hint or dotted(base_of(o)) == hint)]
    freed = ctx.related_row("freed")
    stmt_start = doc.offsets(stmt)[0]

    def stale(o: cst.CSTNode) -> bool:
        n = dotted(base_of(o))
        if n is None:
            return False
        if "." in n or isinstance(o, cst.Subscript):
            return True  # attributes and containers outlive the backward
        ev = idx.binding_before(n, stmt_start)
        if ev is None:
            return True
        b = idx.binding(ev)
        if b is not None and b.kind in ("param", "import", "def"):
            return False  # a parameter is a fresh value at every call
        return freed is not None and doc.first_row(ev.stmt) <= freed

    if named and stale(named[0]):
        return [o for o in named if stale(o)]
    found = [o for o in ops if stale(o)]
    if not found:
        raise CannotFix("cannot tell which operand carries the freed graph")
    return found


def _self_names(doc: Doc, stmt: cst.CSTNode) -> Set[str]:
    """``self``/``cls`` of the enclosing method (receivers of submodule calls, not values)."""
    fn = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.FunctionDef)), None)
    out = {"self", "cls"}
    if fn is not None:
        from gradwarden.fixes._flow import param_names

        ps = param_names(fn)
        if ps and any(isinstance(a, cst.ClassDef) for a in doc.ancestors(fn)):
            out.add(ps[0])
    return out


def _stale_use(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    expr = doc.find(ctx.target)
    if expr is None:
        raise CannotFix("nothing at the use")
    stmt = doc.small_stmt_of(expr) or doc.stmt_of(expr)
    if stmt is None:
        raise CannotFix("no statement")
    scope = doc.scope_of(stmt)
    idx = ScopeIndex(doc, scope)
    stale = _stale_operands(ctx, idx, expr, stmt)
    first = stale[0]
    name = dotted(base_of(first)) or ""
    if isinstance(first, cst.Subscript):
        stored = _store_sites(doc, name)
        if stored:
            edits: List[TextEdit] = []
            for v in stored:
                edits += detach_expr(doc, v)
            return edits
        return detach_expr(doc, first)
    if "." in name:
        # a carried attribute: detach it right before the use
        return [doc.insert_before(stmt, f"{name} = {detached_value(doc, name)}")]
    # a local name
    freed = ctx.related_row("freed")
    outer = None
    for loop in doc.loops_of(stmt, scope):
        if freed is None or not (doc.first_row(loop) <= freed <= doc.last_row(loop)):
            outer = loop
    if outer is not None:
        return [doc.insert_before(outer, f"{name} = {name}.detach()")]
    if isinstance(stmt, cst.AugAssign) and dotted(stmt.target) == name:
        return [doc.insert_before(stmt, f"{name} = {name}.detach()")]
    edits = []
    for o in operands(doc, expr):
        if dotted(o) == name:
            edits += detach_expr(doc, o)
    if not edits:
        raise CannotFix("operand not found")
    return edits


def _store_sites(doc: Doc, container: str) -> List[cst.CSTNode]:
    """Values stored into ``container``: ``c.append(v)``, ``c.insert(i, v)``, ``c[i] = v``,
    ``c += [v]``, ``c.extend([v, w])``."""
    out: List[cst.CSTNode] = []
    for node in doc.walk():
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                dotted(node.func.value) == container:
            m = node.func.attr.value
            pos = [a for a in node.args if a.keyword is None and not a.star]
            if m == "append" and len(pos) == 1:
                out.append(pos[0].value)
            elif m == "insert" and len(pos) == 2:
                out.append(pos[1].value)
            elif m == "extend" and len(pos) == 1 and isinstance(pos[0].value, (cst.List, cst.Tuple)):
                out += [e.value for e in pos[0].value.elements if not isinstance(e, cst.StarredElement)]
        elif isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Subscript) and dotted(t.target.value) == container:
                    out.append(node.value)
        elif isinstance(node, cst.AugAssign) and dotted(node.target) == container and \
                isinstance(node.value, (cst.List, cst.Tuple)):
            out += [e.value for e in node.value.elements if not isinstance(e, cst.StarredElement)]
    return [v for v in out if not (isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute)
                                   and v.func.attr.value == "detach")]


# --------------------------------------------------------------------------- assignment
def _assignment(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    if node is None:
        raise CannotFix("nothing at the target")
    stmt = doc.small_stmt_of(node)
    if isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is not None and \
            (doc.contains(stmt.value, node) or node is stmt):
        return detach_expr(doc, stmt.value)
    if isinstance(node, cst.BaseExpression):
        return detach_expr(doc, node)
    raise CannotFix("no value to detach")


# --------------------------------------------------------------------------- later_loss
def _later_loss(ctx: FixContext) -> List[TextEdit]:
    """Detach, in the statements that build the later loss after the step, the values that
    were computed before the step through the stepped model; refused when the later loss
    trains a model that it reaches only through those values (recompute instead)."""
    from gradwarden.fixes.recompute import StepPlan

    p = StepPlan(ctx)
    if p.loop_carried:
        raise CannotFix("loop-carried: recompute in the loop instead")
    stale = p.stale_names_used_after_step()
    if not stale:
        raise CannotFix("the later loss uses nothing computed before the step")
    if p.reaches_later_model(stale):
        raise CannotFix("the later loss trains a model through these values")
    edits: List[TextEdit] = []
    for stmt in p.after_step_deps():
        for o in operands(ctx.doc, stmt):
            if dotted(o) in stale:
                edits += detach_expr(ctx.doc, o)
    if not edits:
        raise CannotFix("nothing to detach")
    return edits


# --------------------------------------------------------------------------- call_arg
def _call_arg(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    call = find_call_at(doc, ctx.target)
    if call is None:
        node = doc.find(ctx.target, cst.BaseExpression)
        if node is None:
            raise CannotFix("nothing at the target")
        return detach_expr(doc, node)
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if not pos:
        raise CannotFix("no input to detach")
    want = ctx.param("name")
    arg = next((a for a in pos if want and dotted(a.value) == want), pos[0])
    return detach_expr(doc, arg.value)


# --------------------------------------------------------------------------- running_total
def _running_total(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if not isinstance(stmt, cst.AugAssign):
        raise CannotFix("not an accumulation")
    total = dotted(stmt.target)
    if total is None:
        raise CannotFix("unnamed total")
    # a total that is backwarded later is a loss, not a log
    for n in doc.walk(doc.scope_of(stmt)):
        if isinstance(n, cst.Call):
            f = n.func
            if isinstance(f, cst.Attribute) and f.attr.value == "backward" and \
                    references({dotted(base_of(o)) or "" for o in operands(doc, f.value)}, total):
                raise CannotFix("the total is backwarded")
            if (dotted(f) or "").endswith(("autograd.backward", "autograd.grad")) and n.args and \
                    references({dotted(base_of(o)) or "" for o in operands(doc, n.args[0].value)}, total):
                raise CannotFix("the total is differentiated")
    return detach_expr(doc, stmt.value)


_MODES = {
    "stale_use": _stale_use,
    "assignment": _assignment,
    "later_loss": _later_loss,
    "call_arg": _call_arg,
    "running_total": _running_total,
}
