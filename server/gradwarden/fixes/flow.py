"""Fixes of the gradient-flow rules (GW7xx):

- ``unwrap_number``: ``torch.tensor(loss.item())`` -> ``loss`` (the re-wrap dropped the graph);
  ``loss = crit(...).item()`` -> ``loss = crit(...)`` when ``.backward()`` follows;
- ``drop_detach``: ``out.detach()`` / ``out.data`` -> ``out`` where the path was cut;
- ``leave_no_grad``: the forward that feeds the loss moves out of ``with torch.no_grad():``
  (when it is the block's last statement); ``drop_decorator``: ``@torch.no_grad()`` removed from
  the function that computes the loss;
- ``reduce_loss``: ``loss.backward()`` -> ``loss.mean().backward()`` (or ``.sum()``); the
  outputs of ``torch.autograd.grad(outputs, ...)`` likewise (``.sum()``: every element's gradient);
  a per-sample loss a helper returns, where the diagnostic is shown: ``return recon + kld`` ->
  ``return (recon + kld).mean()``;
- ``allow_unused``: ``torch.autograd.grad(..., allow_unused=True)``;
- ``requires_grad_after``: ``x = <value>`` -> ``x = <value>.requires_grad_()`` for an input of
  ``autograd.grad`` that does not require grad, or a plain tensor handed to an optimizer;
- ``detach_instead``: ``y.requires_grad = False`` -> ``y = y.detach()`` on a non-leaf;
- ``leaf_last``: ``w = torch.randn(3, requires_grad=True) * 0.01`` ->
  ``w = (torch.randn(3) * 0.01).requires_grad_()`` (the named tensor becomes the leaf);
- ``retain_grad``: ``w.retain_grad()`` after the statement that makes ``w``;
- ``detach_rebind``: ``h.detach_()`` on a view -> ``h = h.detach()``;
- ``use_reentrant``: ``checkpoint(..., use_reentrant=False)``;
- ``chain_rule``: ``return 2 * x`` -> ``return grad_output * (2 * x)`` in a custom backward;
- ``zero_grad``: ``opt.zero_grad()`` right after ``opt.step()``;
- ``requires_grad_method``: ``module.requires_grad = flag`` -> ``module.requires_grad_(flag)``;
- ``straight_through``: ``torch.round(w / s)`` -> ``(w / s + (torch.round(w / s) - w / s).detach())``
  (same forward value; the gradient passes straight through), when the operand calls nothing.

Each realiser checks the shape of the code it rewrites and refuses (CannotFix) otherwise.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, dotted, is_primary
from gradwarden.fixes._flow import scope_index

_REWRAP = ("tensor", "as_tensor", "Tensor", "FloatTensor")


def _stmt_at(doc: Doc, ctx: FixContext) -> cst.BaseSmallStatement:
    node = doc.find(ctx.target)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if stmt is None:
        raise CannotFix("no simple statement at the target")
    return stmt


def _calls(doc: Doc, root: cst.CSTNode) -> List[cst.Call]:
    return [n for n in doc.walk(root) if isinstance(n, cst.Call)]


def _unwrap_value(call: cst.Call) -> Optional[cst.BaseExpression]:
    """``torch.tensor(X.item())`` / ``torch.tensor(float(X))``: X."""
    name = dotted(call.func) or ""
    if name.rsplit(".", 1)[-1] not in _REWRAP or not call.args or call.args[0].keyword is not None:
        return None
    inner = call.args[0].value
    if isinstance(inner, cst.Call) and not inner.args:
        f = inner.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("item", "tolist"):
            return f.value
    if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Name) and inner.func.value == "float" \
            and len(inner.args) == 1:
        return inner.args[0].value
    return None


@realiser("unwrap_number")
def unwrap_number(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    mode = ctx.param("mode", "rewrap")
    if mode == "rewrap":
        found = [(c, v) for c in _calls(doc, stmt) for v in [_unwrap_value(c)] if v is not None]
        if len(found) != 1:
            raise CannotFix("no single re-wrap of a number in the statement")
        call, value = found[0]
        s, e = doc.full_offsets(call)
        return [TextEdit(s, e, doc.code(value))]
    items = [c for c in _calls(doc, stmt) if isinstance(c.func, cst.Attribute) and c.func.attr.value == "item"
             and not c.args]
    if len(items) != 1 or not isinstance(stmt, (cst.Assign, cst.AugAssign)):
        raise CannotFix("no single .item() in an assignment")
    call = items[0]
    s, e = doc.full_offsets(call)
    return [TextEdit(s, e, doc.code(call.func.value))]  # type: ignore[union-attr]


_NO_GRAD = ("no_grad", "inference_mode")


@realiser("leave_no_grad")
def leave_no_grad(ctx: FixContext) -> List[TextEdit]:
    """Move the statement that computed the loss's inputs out of ``with torch.no_grad():`` —
    only when it is the last statement of the block (so nothing in the block runs after it)."""
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    unit = _line_of_small(doc, stmt)
    block = doc.parent(unit)
    with_node = doc.parent(block) if block is not None else None
    if not isinstance(block, cst.IndentedBlock) or not isinstance(with_node, cst.With) or len(with_node.items) != 1:
        raise CannotFix("not directly inside a one-item `with`")
    item = with_node.items[0].item
    name = dotted(item.func) if isinstance(item, cst.Call) else dotted(item)
    if name is None or name.rsplit(".", 1)[-1] not in _NO_GRAD or with_node.items[0].asname is not None:
        raise CannotFix("the `with` is not torch.no_grad()/inference_mode()")
    before = block.body[-1] is not unit
    if before:
        # not the block's last statement: it moves before the `with` when nothing of the block
        # that runs before it computes what it reads (the target network's value and the
        # policy's Q(s, a) under one no_grad: the Q moves out in front)
        idx = scope_index(doc, doc.scope_of(stmt))
        reads = idx.names_read_by(stmt)
        for other in block.body:
            if other is unit:
                break
            if idx.binds_in(other) & reads:
                raise CannotFix("the block computes what it reads before it")
        if any(idx.names_bound_by(stmt) & idx.reads_in(other) for other in block.body if other is not unit
               and doc.offsets(other)[0] < doc.offsets(unit)[0]):
            raise CannotFix("the block reads what it binds before it")
    first, last = doc.stmt_rows(unit)
    inner = doc.indent_of_row(first)
    outer = doc.indent_of_row(doc.first_row(with_node))
    if not inner.startswith(outer) or inner == outer:
        raise CannotFix("unexpected indentation")
    skip = doc.string_interior_rows(unit)
    rows = []
    for r in range(first, last + 1):
        line = doc.row_text(r)
        if r not in skip and line.startswith(inner):
            line = outer + line[len(inner):]
        elif r not in skip and line.strip():
            raise CannotFix("unexpected indentation")
        rows.append(line)
    moved = doc.newline.join(rows) + doc.newline
    start = doc.row_start(first)
    end = doc.next_row_start(last)
    end = len(doc.text) if end is None else end
    if len(block.body) == 1:
        w0 = doc.row_start(doc.first_row(with_node))
        return [TextEdit(w0, end, moved)]
    if before:
        w0 = doc.row_start(doc.first_row(with_node))
        return [TextEdit(w0, w0, moved), TextEdit(start, end, "")]
    return [TextEdit(start, end, ""), TextEdit(end, end, moved)]


@realiser("drop_decorator")
def drop_decorator(ctx: FixContext) -> List[TextEdit]:
    """Remove a ``@torch.no_grad()`` / ``@torch.inference_mode()`` decorator line."""
    doc = ctx.doc
    # a FunctionDef's range starts at `def`: its decorators are found by row, not by nesting
    row0 = ctx.target.row
    node = next((n for n in doc.walk() if isinstance(n, cst.Decorator) and doc.has_pos(n.decorator)
                 and doc.first_row(n.decorator) == row0), None)
    if not isinstance(node, cst.Decorator):
        raise CannotFix("no decorator at the target")
    dec = node.decorator
    name = dotted(dec.func) if isinstance(dec, cst.Call) else dotted(dec)
    if name is None or name.rsplit(".", 1)[-1] not in _NO_GRAD:
        raise CannotFix("not a no_grad decorator")
    row = doc.first_row(dec)
    if doc.last_row(dec) != row or not doc.row_text(row).lstrip().startswith("@"):
        raise CannotFix("a decorator over several lines")
    start = doc.row_start(row)
    end = doc.next_row_start(row)
    if end is None:
        raise CannotFix("decorator on the last line")
    return [TextEdit(start, end, "")]


@realiser("drop_detach")
def drop_detach(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    hits: List[cst.CSTNode] = []
    for n in doc.walk(stmt):
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "detach" \
                and not n.args:
            hits.append(n)
        elif isinstance(n, cst.Attribute) and n.attr.value == "data":
            hits.append(n)
    if len(hits) != 1:
        raise CannotFix("no single .detach() / .data in the statement")
    node = hits[0]
    inner = node.func.value if isinstance(node, cst.Call) else node.value  # type: ignore[union-attr]
    s, e = doc.full_offsets(node)
    return [TextEdit(s, e, doc.code(inner))]


@realiser("reduce_loss")
def reduce_loss(ctx: FixContext) -> List[TextEdit]:
    """``loss.backward()`` -> ``loss.mean().backward()``; ``torch.autograd.grad(y, xs, ...)`` ->
    ``torch.autograd.grad(y.mean(), xs, ...)`` (not when ``grad_outputs`` is given: that is the
    explicit gradient)."""
    doc = ctx.doc
    reduce = ctx.param("reduce", "mean")
    if reduce not in ("mean", "sum"):
        raise CannotFix("unknown reduction")
    if ctx.param("at") == "return":
        return _reduce_returned(doc, ctx.target, reduce)
    call = doc.find(ctx.target, cst.Call)
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
        return doc.append_call(call.func.value, f".{reduce}()")
    if isinstance(call, cst.Call) and (dotted(call.func) or "") in ("torch.autograd.grad", "autograd.grad", "grad"):
        if any(a.keyword is not None and a.keyword.value == "grad_outputs" for a in call.args) or \
                any(a.star for a in call.args):
            raise CannotFix("grad_outputs given, or unpacked arguments")
        first = next((a for a in call.args if a.keyword is None), None) or \
            next((a for a in call.args if a.keyword is not None and a.keyword.value == "outputs"), None)
        if first is None or isinstance(first.value, (cst.List, cst.Tuple)):
            raise CannotFix("not a single output tensor")
        return doc.append_call(first.value, f".{reduce}()")
    raise CannotFix("not a .backward() or autograd.grad call")


def _reduce_returned(doc: Doc, target, reduce: str) -> List[TextEdit]:
    """``return recon + kld`` -> ``return (recon + kld).mean()``: the whole value a ``return``
    gives back (a helper's per-sample loss), nothing inside it."""
    node = doc.find(target, cst.BaseExpression)
    parent = doc.parent(node) if node is not None else None
    if not isinstance(parent, cst.Return) or parent.value is not node:
        raise CannotFix("not the value of a return")
    if isinstance(node, (cst.Tuple, cst.List, cst.Dict, cst.Set)):
        raise CannotFix("returns several values")
    return doc.append_call(node, f".{reduce}()")


def _set_keyword(doc: Doc, call: cst.Call, key: str, value: str) -> List[TextEdit]:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == key:
            if doc.code(a.value) == value:
                raise CannotFix(f"{key} is already {value}")
            s, e = doc.full_offsets(a.value)
            return [TextEdit(s, e, value)]
    if any(a.star for a in call.args):
        raise CannotFix("call with *args / **kwargs")
    if call.args:
        _, e = doc.full_offsets(call.args[-1].value)
        return [TextEdit(e, e, f", {key}={value}")]
    _, e = doc.full_offsets(call.func)
    text = doc.text
    i = text.find("(", e)
    if i < 0:
        raise CannotFix("no parenthesis")
    return [TextEdit(i + 1, i + 1, f"{key}={value}")]


@realiser("allow_unused")
def allow_unused(ctx: FixContext) -> List[TextEdit]:
    """``allow_unused=True, materialize_grads=True``: the unused input's gradient is zeros, not
    None (code that goes on computing with the gradients, ``p - lr * g``, keeps running)."""
    doc = ctx.doc
    call = doc.find(ctx.target, cst.Call)
    if not isinstance(call, cst.Call) or not (dotted(call.func) or "").endswith("grad"):
        raise CannotFix("not an autograd.grad call")
    keys = {a.keyword.value: a for a in call.args if a.keyword is not None}
    if "allow_unused" in keys and doc.code(keys["allow_unused"].value) == "True" and "materialize_grads" in keys:
        raise CannotFix("already allowed")
    if any(a.star for a in call.args):
        raise CannotFix("call with *args / **kwargs")
    edits: List[TextEdit] = []
    if "allow_unused" in keys:
        s, e = doc.full_offsets(keys["allow_unused"].value)
        edits.append(TextEdit(s, e, "True"))
    added = ([] if "allow_unused" in keys else ["allow_unused=True"]) + \
        ([] if "materialize_grads" in keys else ["materialize_grads=True"])
    if added:
        if not call.args:
            raise CannotFix("a call without arguments")
        _, e = doc.full_offsets(call.args[-1].value)
        edits.append(TextEdit(e, e, ", " + ", ".join(added)))
    return edits


@realiser("use_reentrant")
def use_reentrant(ctx: FixContext) -> List[TextEdit]:
    call = ctx.doc.find(ctx.target, cst.Call)
    if not isinstance(call, cst.Call) or "checkpoint" not in (dotted(call.func) or ""):
        raise CannotFix("not a checkpoint call")
    return _set_keyword(ctx.doc, call, "use_reentrant", "False")


def _line_of_small(doc: Doc, stmt: cst.BaseSmallStatement) -> cst.SimpleStatementLine:
    unit = doc.unit_of(stmt)
    if not isinstance(unit, cst.SimpleStatementLine) or len(unit.body) != 1 or not doc.starts_own_line(unit):
        raise CannotFix("statement shares its line")
    return unit


@realiser("detach_instead")
def detach_instead(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    target: Optional[cst.BaseExpression] = None
    flag: Optional[str] = None
    if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0].target, cst.Attribute) \
            and stmt.targets[0].target.attr.value == "requires_grad":
        target, flag = stmt.targets[0].target.value, doc.code(stmt.value)
    elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and \
            isinstance(stmt.value.func, cst.Attribute) and stmt.value.func.attr.value == "requires_grad_":
        call = stmt.value
        target = call.func.value  # type: ignore[union-attr]
        flag = doc.code(call.args[0].value) if call.args else "True"
    if target is None or dotted(target) is None:
        raise CannotFix("not `name.requires_grad = ...` / `name.requires_grad_(...)`")
    name = dotted(target)
    s, e = doc.offsets(stmt)
    if flag == "False":
        return [TextEdit(s, e, f"{name} = {name}.detach()")]
    if flag == "True":
        return [TextEdit(s, e, f"{name}.retain_grad()")]
    raise CannotFix("flag is not a constant")


@realiser("leaf_last")
def leaf_last(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0].target, cst.Name):
        raise CannotFix("not `name = ...`")
    value = stmt.value
    found = []
    for c in _calls(doc, value):
        for i, a in enumerate(c.args):
            if a.keyword is not None and a.keyword.value == "requires_grad" and doc.code(a.value) == "True":
                found.append((c, i))
    if len(found) != 1 or found[0][0] is value:
        raise CannotFix("no single factory with requires_grad=True inside the value")
    call, i = found[0]
    args = list(call.args)
    del args[i]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    new_call = call.with_changes(args=args)
    new_value = value.deep_replace(call, new_call)
    code = doc.module.code_for_node(new_value)
    s, e = doc.full_offsets(value)
    wrapped = f"{code}.requires_grad_()" if is_primary(new_value) else f"({code}).requires_grad_()"
    return [TextEdit(s, e, wrapped)]


def _insert_line_after(doc: Doc, stmt: cst.BaseSmallStatement, text: str) -> List[TextEdit]:
    unit = _line_of_small(doc, stmt)
    last = doc.last_row(unit)
    indent = doc.indent_of_row(doc.first_row(unit))
    nxt = doc.next_row_start(last)
    if nxt is None:
        return [TextEdit(len(doc.text), len(doc.text), f"{doc.newline}{indent}{text}{doc.newline}")]
    return [TextEdit(nxt, nxt, f"{indent}{text}{doc.newline}")]


@realiser("requires_grad_after")
def requires_grad_after(ctx: FixContext) -> List[TextEdit]:
    """``x = <value>`` -> ``x = <value>.requires_grad_()`` (the tensor autograd.grad differentiates by)."""
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or \
            not isinstance(stmt.targets[0].target, (cst.Name, cst.Attribute)):
        raise CannotFix("not `name = ...` / `obj.attr = ...`")
    return doc.append_call(stmt.value, ".requires_grad_()")


@realiser("retain_grad")
def retain_grad(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1 or dotted(stmt.targets[0].target) is None:
        raise CannotFix("not `name = ...`")
    return _insert_line_after(doc, stmt, f"{dotted(stmt.targets[0].target)}.retain_grad()")


@realiser("detach_rebind")
def detach_rebind(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not (isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and not stmt.value.args and
            isinstance(stmt.value.func, cst.Attribute) and stmt.value.func.attr.value == "detach_"):
        raise CannotFix("not a `name.detach_()` statement")
    name = dotted(stmt.value.func.value)
    if name is None:
        raise CannotFix("receiver is not a name")
    s, e = doc.offsets(stmt)
    return [TextEdit(s, e, f"{name} = {name}.detach()")]


@realiser("chain_rule")
def chain_rule(ctx: FixContext) -> List[TextEdit]:
    """``return 2 * x`` -> ``return grad_output * 2 * x``; in a returned tuple, every gradient
    that does not use the incoming one gets it (``return gh, gw, None`` -> ``return grad_output *
    gh, grad_output * gw, None``): the analysis reports the first, the others are the same bug."""
    doc = ctx.doc
    node = doc.find(ctx.target, cst.BaseExpression)
    grad = ctx.param("grad")
    if node is None or not grad.isidentifier():
        raise CannotFix("no returned expression")
    if not _one_value(node):
        # `(None,) * 12`, `Fn.apply(...)`: a tuple (or None) multiplied by the gradient would raise
        raise CannotFix("the returned expression may not be one tensor")
    targets = [node]
    parent = doc.parent(node)
    tup = doc.parent(parent) if isinstance(parent, cst.Element) else None
    if isinstance(tup, cst.Tuple) and isinstance(doc.parent(tup), cst.Return):
        targets = [el.value for el in tup.elements
                   if not isinstance(el, cst.StarredElement) and _one_value(el.value)
                   and not any(isinstance(n, cst.Name) and n.value == grad for n in _walk(el.value))]
        if not any(t is node for t in targets):
            raise CannotFix("the reported gradient already uses the incoming one")
    edits = []
    for t in targets:
        s, e = doc.full_offsets(t)
        inner = doc.code(t)
        if not is_primary(t) and not (isinstance(t, cst.BinaryOperation) and
                                      isinstance(t.operator, (cst.Multiply, cst.Divide))):
            inner = f"({inner})"
        edits.append(TextEdit(s, e, f"{grad} * {inner}"))
    return edits


def _one_value(node: cst.CSTNode) -> bool:
    """No tuple, list, None or tuple-returning call anywhere in the expression (the chain rule
    multiplies it by the incoming gradient)."""
    from gradwarden.fixes.functions import _TUPLE_RESULTS

    for n in _walk(node):
        if isinstance(n, (cst.Tuple, cst.List, cst.StarredElement, cst.Lambda)):
            return False
        if isinstance(n, cst.Name) and n.value == "None":
            return False
        if isinstance(n, cst.Call):
            f = n.func
            name = f.attr.value if isinstance(f, cst.Attribute) else f.value if isinstance(f, cst.Name) else ""
            if name in _TUPLE_RESULTS or name in ("tuple", "list"):
                return False
    return True


def _walk(node: cst.CSTNode):
    yield node
    for child in node.children:
        yield from _walk(child)


@realiser("zero_grad")
def zero_grad(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    call = stmt.value if isinstance(stmt, cst.Expr) else None
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "step":
        raise CannotFix("not an `opt.step()` statement")
    opt = dotted(call.func.value)
    if opt is None:
        raise CannotFix("optimizer is not a name")
    return _insert_line_after(doc, stmt, f"{opt}.zero_grad()")


@realiser("requires_grad_method")
def requires_grad_method(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0].target, cst.Attribute) and
            stmt.targets[0].target.attr.value == "requires_grad"):
        raise CannotFix("not `module.requires_grad = ...`")
    target = stmt.targets[0].target
    s, e = doc.offsets(stmt)
    return [TextEdit(s, e, f"{doc.code(target.value)}.requires_grad_({doc.code(stmt.value)})")]


_EFFECTFUL = (cst.Call, cst.Await, cst.Yield, cst.NamedExpr, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp,
              cst.GeneratorExp)


def _pure(node: cst.CSTNode) -> bool:
    """No call, await, walrus or comprehension inside: evaluating it again computes the same
    value and runs nothing (a call would run twice)."""
    if isinstance(node, _EFFECTFUL):
        return False
    return all(_pure(child) for child in node.children)


@realiser("straight_through")
def straight_through(ctx: FixContext) -> List[TextEdit]:
    """``torch.round(e)`` / ``e.round()`` -> ``(e + (torch.round(e) - e).detach())``: the
    forward value is the rounded one, the backward passes the gradient straight through."""
    doc = ctx.doc
    op = ctx.param("op").rstrip("_")
    call = doc.find(ctx.target, cst.Call)
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != op:
        raise CannotFix(f"no `{op}` call here")
    if dotted(call.func.value) == "torch":
        if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
            raise CannotFix("not `torch.{op}(x)` with one argument")
        operand: cst.CSTNode = call.args[0].value
    elif not call.args:
        operand = call.func.value
    else:
        raise CannotFix(f"`.{op}(...)` with arguments")
    if not _pure(operand):
        raise CannotFix("the operand would be evaluated again (it calls something)")
    e = doc.code(operand)
    e_par = e if is_primary(operand) else f"({e})"
    s, end = doc.full_offsets(call)
    return [TextEdit(s, end, f"({e_par} + ({doc.code(call)} - {e_par}).detach())")]


@realiser("freeze_first")
def freeze_first(ctx: FixContext) -> List[TextEdit]:
    """``model.fc = nn.Linear(...)`` then ``for p in model.parameters(): p.requires_grad = False``
    freezes the new head too, and nothing is left to train: freeze first, then attach the new
    module (the fine-tuning idiom), by moving the freezing statement before the attachment.
    Only where that statement reads nothing the attachment computes, and the attachment is the
    last module attached to the frozen model before it."""
    doc = ctx.doc
    stmt = _stmt_at(doc, ctx)
    if not (isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 and
            isinstance(stmt.targets[0].target, cst.Attribute) and
            stmt.targets[0].target.attr.value == "requires_grad" and doc.code(stmt.value) == "False"):
        raise CannotFix("not `p.requires_grad = False`")
    var = dotted(stmt.targets[0].target.value)
    loop = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.For)), None)
    if loop is None or dotted(loop.target) != var or not isinstance(loop.iter, cst.Call) or \
            not isinstance(loop.iter.func, cst.Attribute) or loop.iter.func.attr.value != "parameters":
        raise CannotFix("not a loop over a model's parameters")
    model = dotted(loop.iter.func.value)
    if model is None:
        raise CannotFix("the model has no name")
    idx = scope_index(doc, doc.scope_of(loop))
    for unit in [loop, *doc.ancestors(loop)]:
        block = doc.block_of(unit)
        if block is None:
            continue
        _, body, i = block
        heads = [k for k in range(i) if _attaches_module(body[k], model)]
        if not heads:
            continue
        k = heads[-1]
        between = body[k:i]
        reads = idx.reads_in(unit)
        if any(idx.binds_in(u) & reads for u in between):
            raise CannotFix("the freezing statement reads what is computed after the attachment")
        if any(idx.reads_in(u) & idx.binds_in(unit) for u in between):
            raise CannotFix("the statements moved over read what the freezing binds")
        first, last = doc.first_row(unit), doc.last_row(unit)
        start = doc.row_start(first)
        end = doc.next_row_start(last)
        if end is None or doc.first_row(body[k]) == first:
            raise CannotFix("unexpected layout")
        text = doc.text[start:end]
        at = doc.row_start(doc.first_row(body[k]))
        return [TextEdit(at, at, text), TextEdit(start, end, "")]
    raise CannotFix("no module attached to the model before the freezing")


def _attaches_module(unit: cst.CSTNode, model: str) -> bool:
    """``model.attr = SomeModule(...)`` (a statement line of its own)."""
    if not isinstance(unit, cst.SimpleStatementLine) or len(unit.body) != 1:
        return False
    s = unit.body[0]
    if not isinstance(s, cst.Assign) or len(s.targets) != 1 or not isinstance(s.value, cst.Call):
        return False
    t = s.targets[0].target
    return isinstance(t, cst.Attribute) and dotted(t.value) == model


@realiser("explicit_softmax")
def explicit_softmax(ctx: FixContext) -> List[TextEdit]:
    """``s.softmax(dim=-1)`` under forward-mode AD mixed with a backward: PyTorch's own
    forward-mode derivative of softmax writes its output in place, which the backward needs
    (pytorch#188270). Computed from ops whose derivatives do not: ``e = (s - s.amax(dim=-1,
    keepdim=True)).exp()``, then ``e / e.sum(dim=-1, keepdim=True)``. The same values."""
    doc = ctx.doc
    call = doc.find(ctx.target, cst.Call)
    if not isinstance(call, cst.Call):
        raise CannotFix("no softmax call at the target")
    name = dotted(call.func) or ""
    args = [a for a in call.args if not a.star]
    if len(args) != len(call.args):
        raise CannotFix("unpacked arguments")
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "softmax" and \
            name not in ("torch.softmax", "F.softmax", "torch.nn.functional.softmax", "nn.functional.softmax"):
        x = call.func.value
        rest = args
    elif name.split(".")[-1] == "softmax" and args:
        x, rest = args[0].value, args[1:]
    else:
        raise CannotFix("not a softmax")
    dims = [a for a in rest if a.keyword is None or a.keyword.value == "dim"]
    if len(dims) != 1 or len(rest) != 1 or dotted(x) is None:
        raise CannotFix("softmax of a named tensor over one given dim (no dtype) only")
    xs, dim = doc.code(x), doc.code(dims[0].value)
    stmt = doc.small_stmt_of(call)
    if stmt is None:
        raise CannotFix("not in a statement")
    scope = doc.scope_of(stmt)
    used = {n.value for n in doc.walk(scope) if isinstance(n, cst.Name)}
    tmp = next(n for n in ("exp_shifted", "exp_shifted_", "exp_shifted_2", "exp_shifted_3") if n not in used)
    if tmp in used:
        raise CannotFix("no free name")
    s, e = doc.full_offsets(call)
    return [doc.insert_before(stmt, f"{tmp} = ({xs} - {xs}.amax(dim={dim}, keepdim=True)).exp()"),
            TextEdit(s, e, f"{tmp} / {tmp}.sum(dim={dim}, keepdim=True)")]
