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

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import find_call_at, optimizer_model
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, base_of, dotted
from gradwarden.fixes._flow import ScopeIndex, scope_index, operands, references
from gradwarden.fixes.stepplan import StepPlan


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


def _maybe_tuple(doc: Doc, name: str) -> bool:
    """Unpacked from a call next to an output (``output, hidden = model(x, hidden)``): a
    recurrent state, a tensor (GRU) or a tuple of tensors (LSTM)."""
    for node in doc.walk():
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            for t in node.targets:
                if isinstance(t.target, cst.Tuple) and any(dotted(e.value) == name for e in t.target.elements[1:]):
                    return True
    return False


def _may_be_none(doc: Doc, name: str) -> bool:
    """Somewhere bound to ``None`` (``self.h = None`` in ``__init__``, a ``hidden=None``
    parameter): the first iteration passes None, which has no ``.detach()``."""
    short = name.split(".")[-1]
    for node in doc.walk():
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value == "None":
            if any(dotted(t.target) == name for t in node.targets):
                return True
        if isinstance(node, cst.Param) and "." not in name and node.name.value == short and \
                isinstance(node.default, cst.Name) and node.default.value == "None":
            return True
    return False


def detached_value(doc: Doc, name: str, idx: "ScopeIndex | None" = None, at: int = -1) -> str:
    """``name`` detached, as an expression: element-wise for a recurrent state tuple, kept as is
    when it may still be None or (at ``at``, when given) a Python number."""
    if _is_tuple_valued(doc, name):
        value = f"tuple(h.detach() for h in {name})"
    elif _maybe_tuple(doc, name):
        torch, _ = doc.torch_prefix()
        value = (f"{name}.detach() if isinstance({name}, {torch}.Tensor) "
                 f"else tuple(h.detach() for h in {name})")
    else:
        value = f"{name}.detach()"
    if _may_be_none(doc, name):
        value = f"None if {name} is None else " + (f"({value})" if " if " in value else value)
    elif _may_be_number(doc, name, idx, at):
        torch, _ = doc.torch_prefix()
        value = f"{value} if {torch}.is_tensor({name}) else {name}"
    return value


def _is_container(doc: Doc, name: str) -> bool:
    """Bound to a list, dict or deque somewhere (a memory of values; a tuple is a recurrent
    state like LSTM's ``(h, c)``, detached element by element)."""
    for node in doc.walk():
        if isinstance(node, cst.Assign) and any(dotted(t.target) == name for t in node.targets):
            v = node.value
            if isinstance(v, (cst.List, cst.Dict, cst.ListComp, cst.DictComp)):
                return True
            if isinstance(v, cst.Call) and (dotted(v.func) or "").split(".")[-1] in ("list", "dict", "deque"):
                return True
    return False


def _may_be_number(doc: Doc, name: str, idx: "ScopeIndex | None" = None, at: int = -1) -> bool:
    """Bound to a number (``total = 0``) where the detach will run (before the first tensor is
    added it has no ``.detach()``): the binding that reaches ``at``, or any binding."""
    if idx is not None and at >= 0:
        ev = idx.binding_before(name, at)
        b = idx.binding(ev) if ev is not None else None
        return b is not None and isinstance(b.value, (cst.Integer, cst.Float))
    for node in doc.walk():
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.Integer, cst.Float)):
            if any(dotted(t.target) == name for t in node.targets):
                return True
    return False


# --------------------------------------------------------------------------- stale_use
def stale_operands(ctx: FixContext, idx: ScopeIndex, expr: cst.CSTNode, stmt: cst.CSTNode) -> List[cst.CSTNode]:
    doc = ctx.doc
    skip = _self_names(doc, stmt)
    ops = [o for o in operands(doc, use_expr(expr)) if dotted(o) not in skip]
    if not ops:
        raise CannotFix("no operand at the use")
    hint = ctx.param("name")
    named = [o for o in ops if hint and (dotted(o) == hint or dotted(base_of(o)) == hint)]
    freed = ctx.related_row("freed")
    stmt_start = doc.offsets(stmt)[0]

    _mod: List[ScopeIndex] = []

    def module_index() -> ScopeIndex:
        if not _mod:
            _mod.append(scope_index(doc, doc.module))
        return _mod[0]

    use_row = doc.first_row(stmt)
    carried_loop = None
    if freed is not None and freed >= use_row:
        # the backward comes later in the text: it freed the graph in an earlier iteration
        carried_loop = next((lp for lp in doc.loops_of(stmt, doc.scope_of(stmt))
                             if doc.first_row(lp) <= freed <= doc.last_row(lp)), None)

    def stale(o: cst.CSTNode) -> bool:
        n = dotted(base_of(o))
        if n is None:
            return False
        if "." in n or isinstance(o, cst.Subscript):
            return True  # attributes and containers outlive the backward
        ev = idx.binding_before(n, stmt_start)
        if ev is None:
            # not bound here: a global (stale if the module binds it to a value), a module, a builtin
            if idx.scope is doc.module:
                return False
            g = module_index().binding_before(n, len(doc.text))
            gb = module_index().binding(g) if g is not None else None
            return gb is not None and gb.kind in ("assign", "ann", "aug")
        b = idx.binding(ev)
        if b is not None and b.kind in ("param", "import", "def"):
            return False  # a parameter is a fresh value at every call; modules and functions are no values
        if carried_loop is not None:
            return not doc.contains(carried_loop.body, ev.stmt)  # made before the loop: carried
        return freed is not None and doc.first_row(ev.stmt) <= freed

    def container(o: cst.CSTNode) -> bool:
        """A list/dict/set (``temp = []``): its elements are tensors, it has no .detach()."""
        if isinstance(o, cst.Subscript):
            return False
        n = dotted(o)
        ev = idx.binding_before(n, stmt_start) if n else None
        b = idx.binding(ev) if ev is not None else None
        v = b.value if b is not None else None
        if isinstance(v, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
            return True
        return isinstance(v, cst.Call) and dotted(v.func) in ("list", "dict", "set", "collections.deque", "deque")

    ops = [o for o in ops if not container(o)]
    named = [o for o in named if not container(o)]
    if named and stale(named[0]):
        return [o for o in named if stale(o)]
    found = [o for o in ops if stale(o)]
    if not found:
        raise CannotFix("cannot tell which operand carries the freed graph")
    return found


def use_expr(node: cst.CSTNode) -> cst.CSTNode:
    """The part of a statement that reads values (an assignment's targets are not uses)."""
    if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1:
        node = node.body[0]
    if isinstance(node, (cst.Assign, cst.AnnAssign)) and node.value is not None:
        return node.value
    if isinstance(node, (cst.Expr, cst.Return)) and node.value is not None:
        return node.value
    return node


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
    stored = _stored_value(doc, stmt, ctx.param("name"))
    if stored is not None:
        # the engine points at where the value is kept for later: detach it there
        return detach_expr(doc, stored)
    scope = doc.scope_of(stmt)
    idx = scope_index(doc, scope)
    stale = stale_operands(ctx, idx, expr, stmt)
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
        # a carried attribute: detach it right before the use (never a container of values)
        if _is_container(doc, name):
            raise CannotFix(f"`{name}` holds several values: recompute them instead")
        return [doc.insert_before(stmt, f"{name} = {detached_value(doc, name, idx, doc.offsets(stmt)[0])}")]
    # a local name
    freed = ctx.related_row("freed")
    outer = None
    for loop in doc.loops_of(stmt, scope):
        if freed is None or not (doc.first_row(loop) <= freed <= doc.last_row(loop)):
            outer = loop
    if outer is not None:
        return [doc.insert_before(outer, f"{name} = {detached_value(doc, name, idx, doc.offsets(outer)[0])}")]
    if isinstance(stmt, cst.AugAssign) and dotted(stmt.target) == name:
        return [doc.insert_before(stmt, f"{name} = {detached_value(doc, name, idx, doc.offsets(stmt)[0])}")]
    if _is_tuple_valued(doc, name) or _maybe_tuple(doc, name):
        return [doc.insert_before(stmt, f"{name} = {detached_value(doc, name, idx, doc.offsets(stmt)[0])}")]
    edits = []
    for o in operands(doc, use_expr(expr)):
        if dotted(o) == name:
            edits += detach_expr(doc, o)
    if not edits:
        raise CannotFix("operand not found")
    return edits


_STORE_METHODS = {"append": -1, "appendleft": -1, "insert": -1, "add": -1, "put": -1}


def _stored_value(doc: Doc, stmt: cst.CSTNode, hint: str) -> "cst.CSTNode | None":
    """``cache.append(h)`` / ``cache[i] = h`` / ``self.state = h`` where ``h`` (the hint) is the
    carried value: the stored expression (or the operand of it named ``hint``)."""
    if not hint:
        return None
    value = None
    if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        call = stmt.value
        f = call.func
        pos = [a for a in call.args if a.keyword is None and not a.star]
        if isinstance(f, cst.Attribute) and f.attr.value in _STORE_METHODS and pos:
            value = pos[_STORE_METHODS[f.attr.value]].value
    elif isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and \
            isinstance(stmt.targets[0].target, (cst.Subscript, cst.Attribute)):
        value = stmt.value
    if value is None:
        return None
    if dotted(value) == hint:
        return value
    hits = [o for o in operands(doc, value) if dotted(o) == hint]
    return hits[0] if len(hits) == 1 else None


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


def _value(ctx: FixContext) -> List[TextEdit]:
    """Detach exactly the value the diagnostic points at: an expression (a target passed to a
    loss) is detached where it stands; a whole assignment statement, its right-hand side."""
    doc = ctx.doc
    node = doc.find(ctx.target)
    if isinstance(node, cst.BaseExpression) and doc.small_stmt_of(node) is not node:
        stmt = doc.small_stmt_of(node)
        if not (isinstance(stmt, (cst.Assign, cst.AnnAssign)) and stmt.value is node):
            return detach_expr(doc, node)
    return _assignment(ctx)


def _operand(ctx: FixContext) -> List[TextEdit]:
    """Detach the operand named ``name`` inside the expression pointed at (``logp * adv`` ->
    ``logp * adv.detach()``), leaving every other use of it alone."""
    doc = ctx.doc
    node = doc.find(ctx.target)
    want = ctx.param("name")
    if node is None or not want:
        raise CannotFix("nothing at the target")
    hits = [n for n in doc.walk(node) if isinstance(n, (cst.Name, cst.Attribute)) and dotted(n) == want
            and doc.has_pos(n)]
    if len(hits) != 1:
        raise CannotFix(f"`{want}` is not one operand of the expression")
    return detach_expr(doc, hits[0])


# --------------------------------------------------------------------------- later_loss
def _later_loss(ctx: FixContext) -> List[TextEdit]:
    """Detach, in the statements that build the later loss after the step, the values that
    were computed before the step through the stepped model; refused when the later loss
    trains a model that it reaches only through those values (recompute instead)."""
    try:
        p = StepPlan(ctx)
    except CannotFix:
        return _later_loss_through_call(ctx)
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


def _later_loss_through_call(ctx: FixContext) -> List[TextEdit]:
    """The later backward runs in a helper called after the step (CycleGAN's
    ``self.backward_D_basic(netD, real_B, self.fake_B)``): detach, in that call, the arguments
    computed before the step through the stepped model; refused when they also come from the
    model that the helper's loss trains."""
    doc = ctx.doc
    node = doc.find(ctx.diag.span)
    step = doc.small_stmt_of(node) if node is not None else None
    call = doc.find(ctx.diag.span, cst.Call)
    if step is None or not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        raise CannotFix("no step call")
    opt = ctx.param("opt") or dotted(call.func.value) or ""
    model = optimizer_model(doc, opt) if opt else None
    bspan = ctx.span_param("backward_span") or ctx.related("backward")
    bcall = find_call_at(doc, bspan) if bspan is not None else None
    bstmt = doc.small_stmt_of(bcall) if bcall is not None else None
    if model is None or bstmt is None:
        raise CannotFix("cannot tell the stepped model or the later backward")
    scope = doc.scope_of(step)
    helper = next((a for a in doc.ancestors(bstmt) if isinstance(a, cst.FunctionDef)), None)
    if helper is None or doc.scope_of(bstmt) is scope:
        raise CannotFix("the backward is not in a helper")
    idx = scope_index(doc, scope)
    s_start, s_end = doc.offsets(step)
    stale: Set[str] = set()
    stale_stmts = []
    for n in doc.walk(scope):
        if isinstance(n, cst.BaseSmallStatement) and doc.has_pos(n) and doc.offsets(n)[1] <= s_start and \
                doc.scope_of(n) is scope and references(idx.names_read_by(n), model):
            stale |= idx.names_bound_by(n)
            stale_stmts.append(n)
    calls = [c for c in doc.walk(scope) if isinstance(c, cst.Call) and doc.has_pos(c)
             and (dotted(c.func) or "").split(".")[-1] == helper.name.value and doc.offsets(c)[0] >= s_end]
    if not stale or not calls:
        raise CannotFix("no call of the helper after the step with a stale argument")
    later = _later_optimizer_model(doc, scope, opt, doc.offsets(calls[-1])[1])
    if later is not None and any(references(idx.names_read_by(s), later) for s in stale_stmts):
        raise CannotFix("the helper's loss trains a model through these values")
    edits: List[TextEdit] = []
    for c in calls:
        for a in c.args:
            if not a.star and dotted(a.value) in stale:
                edits += detach_expr(doc, a.value)
    if not edits:
        raise CannotFix("nothing to detach")
    return edits


def _later_optimizer_model(doc: Doc, scope: cst.CSTNode, opt: str, after: int) -> Optional[str]:
    for n in doc.walk(scope):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step" and \
                doc.has_pos(n) and doc.offsets(n)[0] >= after:
            name = dotted(n.func.value)
            if name and name != opt:
                return optimizer_model(doc, name)
    return None


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
    arg = next((a for a in pos if want and dotted(a.value) == want), None)
    if arg is None:
        if len(pos) > 1:
            raise CannotFix("cannot tell which argument carries the other model's value")
        arg = pos[0]
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
    "value": _value,
    "operand": _operand,
    "later_loss": _later_loss,
    "call_arg": _call_arg,
    "running_total": _running_total,
}
