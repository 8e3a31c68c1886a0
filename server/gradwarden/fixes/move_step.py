"""``move_step``: run ``opt.step()`` (or a hand-written update through ``.data``) after the later
backward that still needs the old weights (the GAN ordering: both backward passes first, then
the steps). Unsafe: the step now also sees the gradients that backward accumulates.

The reorder is done only when it is checked to be otherwise neutral: the step and the
backward are in the same block, nothing in between zeroes or steps the same optimizer,
rebinds it, or runs the stepped model (which would now see the old weights).

Where the write cannot move after the backward (it sits in a loop, ``for p in
D.parameters(): p.data.clamp_(...)``; or what comes between uses the model, as an EMA's
``apply_shadow()`` before a validation pass), the backward moves before it instead, when
nothing in between computes what the backward reads or touches gradients: the backward then
differentiates the values the forward used, and what follows sees the same weights as before."""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import find_call_at, optimizer_model
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, dotted
from gradwarden.fixes._flow import scope_index, references
from gradwarden.fixes.recompute import relocate, same_block, simple_line


@realiser("move_step")
def move_step(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    bspan = ctx.span_param("backward_span") or ctx.related("backward")
    bcall = find_call_at(doc, bspan) if bspan is not None else None
    if bcall is None:
        raise CannotFix("no later backward")
    bstmt = doc.small_stmt_of(bcall)
    if bstmt is None:
        raise CannotFix("backward inside an expression")
    try:
        return _step_after(ctx, bstmt)
    except CannotFix:
        return _backward_before(ctx, bstmt)


def _step_after(ctx: FixContext, bstmt: cst.CSTNode) -> List[TextEdit]:
    doc = ctx.doc
    step = _step_statement(ctx, bstmt)
    if not same_block(doc, step, bstmt):
        raise CannotFix("step and backward are not in the same block")
    s_start, s_end = doc.offsets(step)
    b_start, _ = doc.offsets(bstmt)
    if b_start <= s_start:
        raise CannotFix("the backward does not come after the step")
    simple_line(doc, step)
    simple_line(doc, bstmt)
    idx = scope_index(doc, doc.scope_of(step))
    opt, model = _what_steps(doc, step)
    if model is None:
        raise CannotFix("cannot tell which model the step updates")
    moved_names = idx.binds_in(doc.unit_of(step))
    # statements between the step and the backward (and the backward itself)
    block = doc.block_of(doc.unit_of(step))
    assert block is not None
    _, body, i = block
    j = next(k for k, u in enumerate(body) if u is doc.unit_of(bstmt))
    between = list(body[i + 1: j + 1])
    for unit in between:
        for node in doc.walk(unit):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                recv = dotted(node.func.value)
                m = node.func.attr.value
                if m in ("step", "zero_grad") and recv is not None and (recv == opt or (model and recv == model)):
                    raise CannotFix(f"`{recv}.{m}()` runs before the backward")
        reads = idx.reads_in(unit)
        if moved_names & set(reads) and unit is not doc.unit_of(bstmt):
            raise CannotFix("a statement before the backward reads what the step binds")
        if opt and opt in idx.binds_in(unit):
            raise CannotFix("the optimizer is rebound in between")
        if model and unit is not doc.unit_of(bstmt):
            if references(reads, model):
                raise CannotFix(f"`{model}` is used between the step and the backward")
        if opt and any(r == opt for r in reads) and unit is not doc.unit_of(bstmt):
            raise CannotFix("the optimizer is used in between")
    return relocate(doc, idx, [step], bstmt, after=True, limit_end=s_start)


# calls and attributes that touch gradients: a backward moved before them would change them
_GRAD_TOUCH = frozenset({"backward", "step", "zero_grad", "grad", "clip_grad_norm_", "clip_grad_value_"})


def _backward_before(ctx: FixContext, bstmt: cst.CSTNode) -> List[TextEdit]:
    doc = ctx.doc
    simple_line(doc, bstmt)
    write = _step_statement(ctx, bstmt)
    b_unit = doc.unit_of(bstmt)
    block = doc.block_of(b_unit)
    if block is None:
        raise CannotFix("the backward is not in a block")
    _, body, j = block
    anchor = next((a for a in [write, *doc.ancestors(write)] if any(a is u for u in body)), None)
    if anchor is None:
        raise CannotFix("the write is not in the backward's block")
    i = next(k for k, u in enumerate(body) if u is anchor)
    if i >= j:
        raise CannotFix("the backward does not come after the write")
    idx = scope_index(doc, doc.scope_of(bstmt))
    needs = idx.reads_in(b_unit)
    for unit in body[i:j]:
        if idx.binds_in(unit) & needs:
            raise CannotFix("what the backward reads is computed after the write")
        for node in doc.walk(unit):
            if isinstance(node, cst.Attribute) and node.attr.value in _GRAD_TOUCH:
                raise CannotFix(f"`.{node.attr.value}` between the write and the backward")
            if isinstance(node, cst.Name) and node.value in _GRAD_TOUCH:
                raise CannotFix(f"`{node.value}` between the write and the backward")
    return relocate(doc, idx, [bstmt], anchor, after=False, limit_end=doc.offsets(bstmt)[0])


def _step_statement(ctx: FixContext, bstmt: cst.CSTNode) -> cst.CSTNode:
    """The statement to move: the diagnostic's ``opt.step()``; for a write inside a helper
    function (``sgd_update(D)`` writing ``p.data``), the call of that helper in the backward's
    scope."""
    doc = ctx.doc
    node = doc.find(ctx.diag.span)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if stmt is None:
        raise CannotFix("no statement at the diagnostic")
    scope = doc.scope_of(bstmt)
    if doc.scope_of(stmt) is scope:
        return stmt
    fn = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.FunctionDef)), None)
    if fn is None:
        raise CannotFix("the write is not in a function")
    fname = fn.name.value
    b_row = doc.first_row(bstmt)
    best: Optional[cst.CSTNode] = None
    for n in doc.walk(scope):
        if isinstance(n, cst.Call) and doc.has_pos(n) and (dotted(n.func) or "").split(".")[-1] == fname:
            s = doc.small_stmt_of(n)
            if s is None or doc.scope_of(s) is not scope:
                continue
            row = doc.first_row(s)
            if row < b_row and (best is None or row > doc.first_row(best)):
                best = s
    if best is None:
        raise CannotFix(f"no call of `{fname}` before the backward")
    return best


def _what_steps(doc: Doc, step: cst.CSTNode):
    """(optimizer name, model it trains) of ``opt.step()``; for a helper call, the model
    passed to it (``sgd_update_data(D, lr)`` -> D)."""
    call = None
    if isinstance(step, cst.Expr) and isinstance(step.value, cst.Call):
        call = step.value
    if call is None:
        return "", None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "step":
        opt = dotted(call.func.value) or ""
        return opt, optimizer_model(doc, opt)
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if pos and dotted(pos[0].value):
        return "", dotted(pos[0].value)
    return "", None
