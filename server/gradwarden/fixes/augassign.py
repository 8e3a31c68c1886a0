"""``augassign_to_binop``: ``x += y`` -> ``x = x + y`` (out of place: ``x`` names a new tensor,
the saved one keeps its version). Refused when another alias of ``x`` (a view it was made
from, or a view made from it) is read afterwards: it would no longer see the update, and the
``.clone()`` fix is offered instead."""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import alias_set, assignable, binop_text, needs_parens_as_right_operand
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit
from gradwarden.fixes._flow import scope_index


def check_no_alias_read(doc: Doc, stmt: cst.CSTNode, name: str) -> None:
    idx = scope_index(doc, doc.scope_of(stmt))
    chain, others = alias_set(idx, name, doc.offsets(stmt)[0])
    for n in [n for n, _ in chain[1:]] + sorted(others):
        if idx.read_after(n, stmt):
            raise CannotFix(f"`{n}`, an alias of `{name}`, is read after the write")


@realiser("augassign_to_binop")
def augassign_to_binop(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if not isinstance(stmt, cst.AugAssign):
        raise CannotFix("not an augmented assignment")
    if not isinstance(stmt.target, (cst.Name, cst.Attribute)):
        raise CannotFix("the target is a subscript (still in place)")
    target = doc.code(stmt.target)
    assignable(doc, target.replace(" ", ""))
    if ctx.param("check_aliases", "1") == "1":
        check_no_alias_read(doc, stmt, target.replace(" ", ""))
    op = binop_text(stmt)
    os_, oe = doc.offsets(stmt.operator)
    edits = [TextEdit(os_, os_ + len(op) + 1, f"= {target} {op}")]
    if doc.text[os_:os_ + len(op) + 1] != op + "=":
        raise CannotFix("unexpected operator text")
    if needs_parens_as_right_operand(stmt.value, op):
        s, e = doc.full_offsets(stmt.value)
        edits += [TextEdit(s, s, "("), TextEdit(e, e, ")")]
    return edits
