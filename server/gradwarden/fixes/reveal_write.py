"""``reveal_write``: write the tensor itself instead of a ``.detach()`` / ``.data`` alias of it
(``x.detach()[mask] = 0`` -> ``x[mask] = 0``), so that autograd records the write and
differentiates the values later ops really read. Unsafe: if a node saved the tensor, the write
now raises (the version check is back) instead of silently corrupting the gradients."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._doc import CannotFix, TextEdit


def _receiver(stmt: cst.CSTNode, node: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The expression written in place by ``stmt``."""
    if isinstance(stmt, cst.Assign):
        for t in stmt.targets:
            if isinstance(t.target, cst.Subscript):
                return t.target.value
    if isinstance(stmt, cst.AugAssign):
        return stmt.target.value if isinstance(stmt.target, cst.Subscript) else stmt.target
    call = node if isinstance(node, cst.Call) else None
    if call is None and isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call):
        call = stmt.value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute):
        return call.func.value
    return None


@realiser("reveal_write")
def reveal_write(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if stmt is None:
        raise CannotFix("no statement at the write")
    expr = _receiver(stmt, node)
    while expr is not None:
        if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
            _, e_val = doc.full_offsets(expr.value)
            _, e = doc.offsets(expr)
            return [TextEdit(e_val, e, "")]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and \
                expr.func.attr.value == "detach" and not expr.args:
            _, e_val = doc.full_offsets(expr.func.value)
            _, e = doc.offsets(expr)
            return [TextEdit(e_val, e, "")]
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            break
    raise CannotFix("no `.detach()` / `.data` alias in the written expression")
