"""``no_grad``: run an in-place update of a leaf under ``with torch.no_grad():``.

The statement is re-indented under a new ``with`` (or joins the ``with torch.no_grad():``
block right above it, so that consecutive updates end up in one block). Only statements
that *are* the update (``w += 1``, ``w[0] = v``, ``w.normal_()``) are wrapped: when the
in-place result is used (``y = w.relu_()``), turning autograd off would silently change the
gradients, so the fix is refused.
"""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, dotted


def _is_no_grad_with(doc: Doc, node: cst.CSTNode, torch: str) -> bool:
    if not isinstance(node, cst.With) or len(node.items) != 1 or node.items[0].asname is not None:
        return False
    item = node.items[0].item
    if not isinstance(item, cst.Call) or item.args:
        return False
    name = dotted(item.func)
    return name in (f"{torch}.no_grad", "no_grad", f"{torch}.inference_mode") and \
        isinstance(node.body, cst.IndentedBlock)


@realiser("no_grad")
def no_grad(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    if node is None:
        raise CannotFix("nothing at the target")
    stmt = doc.small_stmt_of(node)
    if stmt is None:
        raise CannotFix("not a simple statement")
    if isinstance(stmt, cst.Expr):
        call = doc.find(ctx.target, cst.Call)
        if call is not None and call is not stmt.value and doc.contains(stmt.value, call):
            raise CannotFix("the in-place result is used")
    elif isinstance(stmt, cst.Assign):
        if not any(isinstance(t.target, cst.Subscript) for t in stmt.targets):
            raise CannotFix("the in-place result is used")
        if doc.contains(stmt.value, node) and not isinstance(node, cst.Assign):
            raise CannotFix("the write is inside the value")
    elif not isinstance(stmt, cst.AugAssign):
        raise CannotFix("not an update statement")
    unit = doc.unit_of(stmt)
    if not isinstance(unit, cst.SimpleStatementLine) or not doc.starts_own_line(unit):
        raise CannotFix("statement shares its line")
    torch, extra = doc.torch_prefix()
    first, last = doc.stmt_rows(unit)
    indent = doc.indent_of_row(first)
    inner = doc.string_interior_rows(unit)
    # join the `with torch.no_grad():` block right above
    block = doc.block_of(unit)
    edits: List[TextEdit] = list(extra)
    if block is not None and block[2] > 0:
        prev = block[1][block[2] - 1]
        if _is_no_grad_with(doc, prev, torch) and doc.last_row(prev) + 1 == first and \
                doc.indent_of_row(doc.first_row(prev)) == indent:
            body_indent = doc.body_indent(prev.body) or ""
            if body_indent.startswith(indent) and len(body_indent) > len(indent):
                add = body_indent[len(indent):]
                return edits + _indent_rows(doc, first, last, inner, add)
    unit_text = doc.indent_unit(indent)
    start = doc.row_start(first)
    edits.append(TextEdit(start, start, f"{indent}with {torch}.no_grad():{doc.newline}"))
    return edits + _indent_rows(doc, first, last, inner, unit_text)


def _indent_rows(doc: Doc, first: int, last: int, skip, add: str) -> List[TextEdit]:
    out: List[TextEdit] = []
    for row in range(first, last + 1):
        if row in skip or not doc.row_text(row).strip():
            continue
        at = doc.row_start(row)
        out.append(TextEdit(at, at, add))
    return out
