"""``clone``: give the write a tensor of its own.

Modes (``Fix.params["mode"]``):

- ``expr``: append ``.clone()`` to the target expression (an ``expand``/``expand_as`` result
  before it is written, the right-hand side of an overlapping or ``.data =`` assignment);
- ``before_write``: ``x = x.clone()`` just before an in-place write to ``x``, a tensor that a
  graph saved (the rest of the code sees the same values, the saved version stays intact).
  When another alias of ``x`` (``x`` is ``K.diagonal()`` and ``K`` is used afterwards) is read
  after the write, the clone goes on that alias before the view is taken (``K = K.clone()``
  before ``diag = K.diagonal()``) so every alias still sees the write; refused when that is
  not possible (see ``break_alias``);
- ``break_alias`` (unsafe): clone even though other aliases read later no longer see the write
  (``out = feat.clone()`` instead of ``out = feat``);
- ``argument``: ``m(p.clone())`` for an in-place module applied to a leaf;
- ``grad_output``: a custom ``backward`` writes into its incoming gradient: clone it where the
  written alias is made (``g = grad_output[:, a:b].clone()``) or, for a write into the
  parameter itself, ``grad_output = grad_output.clone()`` at the top of ``backward``;
- ``data``: a write through an alias made with ``.data``: make it a copy
  (``snap = out.detach().clone()``).
"""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import alias_set, assignable, find_call_at, find_write
from gradwarden.fixes._doc import CannotFix, TextEdit, dotted
from gradwarden.fixes._flow import scope_index, param_names


@realiser("clone")
def clone(ctx: FixContext) -> List[TextEdit]:
    mode = ctx.param("mode", "expr" if not ctx.param("name") else "before_write")
    fn = _MODES.get(mode)
    if fn is None:
        raise CannotFix(f"unknown clone mode {mode}")
    return fn(ctx)


def _expr(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target, cst.BaseExpression)
    if node is None:
        raise CannotFix("no expression at the target")
    parent = doc.parent(node)
    if isinstance(parent, cst.Attribute) and parent.attr.value == "clone":
        raise CannotFix("already cloned")
    return doc.append_call(node, ".clone()")


def _before_write(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    name = assignable(doc, w.name)
    scope = doc.scope_of(w.stmt)
    idx = scope_index(doc, scope)
    start = doc.offsets(w.stmt)[0]
    chain, others = alias_set(idx, name, start)
    readers = [i for i, (n, _) in enumerate(chain) if i > 0 and idx.read_after(n, w.stmt)]
    if any(idx.read_after(n, w.stmt) for n in others):
        raise CannotFix("another view of the tensor is read after the write")
    if not readers:
        return [doc.insert_before(w.stmt, f"{name} = {name}.clone()")]
    k = max(readers)
    ancestor, made_view = chain[k]
    if made_view is None:
        raise CannotFix("no view statement")
    assignable(doc, ancestor)
    save_row = ctx.related_row("save")
    if save_row is not None:
        s_first, s_last = doc.first_row(scope), doc.last_row(scope)
        if scope is doc.module or s_first <= save_row <= s_last:
            if save_row >= doc.first_row(made_view):
                raise CannotFix("the tensor is saved after its view is taken")
    return [doc.insert_before(made_view, f"{ancestor} = {ancestor}.clone()")]


def _break_alias(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    name = assignable(doc, w.name)
    idx = scope_index(doc, doc.scope_of(w.stmt))
    start = doc.offsets(w.stmt)[0]
    ev = idx.binding_before(name, start)
    b = idx.binding(ev) if ev is not None else None
    if b is not None and b.kind == "assign" and b.index is None and b.value is not None and \
            dotted(b.value) is not None and doc.scope_of(b.stmt) is doc.scope_of(w.stmt):
        # `out = feat` -> `out = feat.clone()`
        return doc.append_call(b.value, ".clone()")
    return [doc.insert_before(w.stmt, f"{name} = {name}.clone()")]


def _argument(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    call = find_call_at(doc, ctx.target)
    if call is None:
        raise CannotFix("no call at the target")
    want = ctx.param("name")
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if not pos:
        raise CannotFix("call without a positional input")
    arg = next((a for a in pos if want and dotted(a.value) == want), pos[0])
    v = arg.value
    if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "clone":
        raise CannotFix("already cloned")
    return doc.append_call(v, ".clone()")


def _grad_output(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    name = w.name
    if not name:
        raise CannotFix("unnamed target")
    fn = next((a for a in doc.ancestors(w.stmt) if isinstance(a, cst.FunctionDef)), None)
    if fn is None:
        raise CannotFix("not inside a function")
    params = param_names(fn)
    grads = params[1:] if params else []
    idx = scope_index(doc, fn)
    chain = idx.alias_chain(name, doc.offsets(w.stmt)[0])
    names = [n for n, _ in chain]
    hit = next((i for i, n in enumerate(names) if n in grads), None)
    if hit is None:
        raise CannotFix("the written tensor does not come from a gradient parameter")
    if hit == 1:
        made = chain[1][1]
        ev = idx.binding_before(name, doc.offsets(w.stmt)[0])
        b = idx.binding(ev) if ev is not None else None
        if b is not None and b.value is not None and b.index is None and b.stmt is made:
            v = b.value
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "clone":
                raise CannotFix("already cloned")
            return doc.append_call(v, ".clone()")
    param = names[hit]
    return [_insert_at_top(ctx, fn, f"{param} = {param}.clone()")]


def _insert_at_top(ctx: FixContext, fn: cst.FunctionDef, code: str) -> TextEdit:
    doc = ctx.doc
    body = fn.body
    if isinstance(body, cst.SimpleStatementSuite):
        first = body.body[0]
        s, _ = doc.offsets(first)
        return TextEdit(s, s, code + "; ")
    stmts = list(body.body)
    if not stmts:
        raise CannotFix("empty body")
    first = stmts[0]
    if _is_docstring(first):
        if len(stmts) > 1:
            return doc.insert_before(stmts[1], code)
        return doc.insert_after(first, code)
    return doc.insert_before(first.body[0] if isinstance(first, cst.SimpleStatementLine) else first, code)


def _is_docstring(stmt: cst.CSTNode) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, (cst.SimpleString,
                                                                              cst.ConcatenatedString))


def _data(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    name = w.name
    if name and name.endswith(".data") and "." not in name[:-len(".data")]:
        return _data_direct(ctx, w, name[:-len(".data")])
    if not name or name.endswith(".data") or ".data." in name:
        raise CannotFix("the write goes directly through .data")
    idx = scope_index(doc, doc.scope_of(w.stmt))
    at = doc.offsets(w.stmt)[0]
    for _ in range(6):
        ev = idx.binding_before(name, at)
        b = idx.binding(ev) if ev is not None else None
        if b is None or b.value is None or b.kind not in ("assign", "ann"):
            break
        v = b.value
        if isinstance(v, cst.Attribute) and v.attr.value == "data":
            # `snap = out.data` -> `snap = out.detach().clone()`
            _, e_val = doc.full_offsets(v.value)
            _, e = doc.offsets(v)
            return [TextEdit(e_val, e, ".detach().clone()")]
        from gradwarden.fixes._flow import view_source

        src = view_source(v, tuple_index=b.index)
        if src is None:
            break
        name, at = src, doc.offsets(b.stmt)[0]
    raise CannotFix("no `.data` alias found")


def _data_direct(ctx: FixContext, w, name: str) -> List[TextEdit]:
    """``x.data[i] = x.data[i] * s`` where a graph saved ``x``: write a copy of ``x``, in the
    open (``x = x.clone()``, then ``x[i] = x[i] * s``): the saved values stay intact and the
    write is differentiated like any op. Refused, like ``before_write``, when another view of
    ``x`` is read after the write (it would no longer see it), and for a Parameter."""
    doc = ctx.doc
    assignable(doc, name)
    idx = scope_index(doc, doc.scope_of(w.stmt))
    start = doc.offsets(w.stmt)[0]
    ev = idx.binding_before(name, start)
    b = idx.binding(ev) if ev is not None else None
    own = b is not None and b.kind in ("assign", "ann") and b.value is not None and \
        not isinstance(b.value, (cst.Name, cst.Attribute, cst.Subscript))
    if not own and not ((b is None or b.kind == "param") and _returned_argument(doc, w.stmt, name)):
        # a loop variable over parameters, an alias, an argument the caller may read again: the
        # write must reach the tensor behind the name, which a copy would not
        raise CannotFix(f"`{name}` is not a tensor of this function's own making")
    chain, others = alias_set(idx, name, start)
    if any(idx.read_after(n, w.stmt) for n in others) or \
            any(i > 0 and idx.read_after(n, w.stmt) for i, (n, _) in enumerate(chain)):
        raise CannotFix("another view of the tensor is read after the write")
    edits = [doc.insert_before(w.stmt, f"{name} = {name}.clone()")]
    for node in doc.walk(w.stmt):
        if isinstance(node, cst.Attribute) and node.attr.value == "data" and dotted(node.value) == name:
            _, e_val = doc.full_offsets(node.value)
            _, e = doc.offsets(node)
            edits.append(TextEdit(e_val, e, ""))
    return edits


def _returned_argument(doc, stmt: cst.CSTNode, name: str) -> bool:
    """Is ``name`` a parameter of the function around ``stmt`` that every ``return`` of it
    gives back (``def scale(x): ...; return x``: the written values leave through the return)?"""
    fn = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.FunctionDef)), None)
    if fn is None or name not in param_names(fn):
        return False
    returns = [n for n in doc.walk(fn) if isinstance(n, cst.Return)
               and next((a for a in doc.ancestors(n) if isinstance(a, (cst.FunctionDef, cst.Lambda))), None) is fn]
    return bool(returns) and all(r.value is not None and dotted(r.value) == name for r in returns)


def _saved_source(ctx: FixContext) -> List[TextEdit]:
    """``f[i] = f[i - 1] * w + b``: the right-hand side reads a view of the tensor it writes into,
    and an op of the same statement saves that view (``mul`` saves ``f[i - 1]`` for ``w``'s
    gradient); the write then changes what was saved. Clone the views read there
    (``f[i - 1].clone() * w + b``): same values, same gradients, memory of their own."""
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    if not isinstance(w.stmt, (cst.Assign, cst.AugAssign)) or w.name is None:
        raise CannotFix("not an assignment into a tensor")
    if ctx.related_row("save") not in range(doc.first_row(w.stmt), doc.last_row(w.stmt) + 1):
        raise CannotFix("the tensor is not saved by this statement")
    value = w.stmt.value
    reads = [n for n in doc.walk(value) if isinstance(n, cst.Subscript) and dotted(n.value) == w.name]
    if not reads or any(dotted(n) == w.name for n in doc.walk(value) if isinstance(n, (cst.Name, cst.Attribute))
                        and not any(n is r.value for r in reads)):
        raise CannotFix("the right-hand side does not read views of the written tensor only")
    edits: List[TextEdit] = []
    for r in reads:
        parent = doc.parent(r)
        if isinstance(parent, cst.Attribute) and parent.attr.value == "clone":
            continue
        edits += doc.append_call(r, ".clone()")
    if not edits:
        raise CannotFix("already cloned")
    return edits


_MODES = {
    "expr": _expr,
    "before_write": _before_write,
    "break_alias": _break_alias,
    "argument": _argument,
    "grad_output": _grad_output,
    "data": _data,
    "saved_source": _saved_source,
}
