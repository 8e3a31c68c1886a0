"""``recompute``: compute a value again where it is needed instead of reusing one whose graph
is gone (or whose saved weights an optimizer step changed). Unsafe: the recomputed value uses
the current weights.

Modes:

- ``before_use`` (GW402): repeat the defining assignment of the stale name right before its
  first use after the freeing backward (``logits = model(X)``);
- ``into_loop`` (GW403): the value is built once before the loop whose backward frees it:
  build it at the top of that loop instead (moved, or copied when it is used elsewhere);
- ``after_step`` (GW501/GW502): the later loss was built before ``opt.step()`` through the
  stepped model: move (or copy) the statements that compute it through that model to right
  after the step (the GAN fix); when the later backward runs first in the next iteration of a
  loop, the value is carried from before the loop: rebuild it at the top of the loop.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Set

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._doc import LOOPS, CannotFix, Doc, TextEdit, dotted
from gradwarden.fixes._flow import ScopeIndex, scope_index, deps_closure, references
from gradwarden.fixes.detach import stale_operands
from gradwarden.fixes.stepplan import StepPlan


@realiser("recompute")
def recompute(ctx: FixContext) -> List[TextEdit]:
    mode = ctx.param("mode", "before_use")
    fn = _MODES.get(mode)
    if fn is None:
        raise CannotFix(f"unknown recompute mode {mode}")
    return fn(ctx)


# --------------------------------------------------------------------------- helpers
def simple_line(doc: Doc, stmt: cst.CSTNode) -> cst.SimpleStatementLine:
    unit = doc.unit_of(stmt)
    if not isinstance(unit, cst.SimpleStatementLine) or not doc.starts_own_line(unit):
        raise CannotFix("statement shares its line")
    return unit


def block_ancestors(doc: Doc, node: cst.CSTNode) -> List[cst.CSTNode]:
    return [a for a in doc.ancestors(node) if isinstance(a, (cst.IndentedBlock, cst.Module))]


def same_block(doc: Doc, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    pa, pb = doc.parent(doc.unit_of(a)), doc.parent(doc.unit_of(b))
    return pa is pb


def relocate(doc: Doc, idx: ScopeIndex, stmts: Sequence[cst.CSTNode], where: cst.CSTNode, *, after: bool,
             limit_end: int, keep_any: bool = False) -> List[TextEdit]:
    """Move (or copy, when their values are still read before ``limit_end`` by statements that
    stay) the statement lines ``stmts`` to just before/after ``where``, re-indented."""
    units = [simple_line(doc, s) for s in stmts]
    moving = set(id(u) for u in units)
    target_unit = doc.unit_of(where)
    indent = doc.indent_of_row(doc.first_row(target_unit))
    text = "".join(doc.reindented(u, indent) for u in units)
    edits: List[TextEdit] = []
    kept = set()
    for u, s in zip(units, stmts):
        keep = keep_any
        u_start, u_end = doc.offsets(u)
        for name in idx.names_bound_by(s):
            for ev in idx.events:
                if ev.name != name or ev.kind not in ("read", "aug", "mutate"):
                    continue
                if ev.start < u_end or ev.start >= limit_end:
                    continue
                owner = doc.unit_of(ev.stmt) if isinstance(ev.stmt, cst.BaseSmallStatement) else ev.stmt
                if id(owner) in moving:
                    continue
                cur = idx.binding_before(name, ev.start)
                if cur is not None and cur.stmt is s:
                    keep = True
        if keep:
            kept.add(id(s))
    # a statement that stays where it is still needs what the statements before it bound:
    # those stay too (they are copied, not moved)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if id(s) not in kept:
                continue
            for r in idx.names_read_by(s):
                cur = idx.binding_before(r, doc.offsets(s)[0])
                if cur is not None and any(cur.stmt is t for t in stmts) and id(cur.stmt) not in kept:
                    kept.add(id(cur.stmt))
                    changed = True
    for u, s in zip(units, stmts):
        if id(s) not in kept:
            a, b = doc.unit_lines(u)
            edits.append(TextEdit(a, b, ""))
    if after:
        end_row = doc.last_row(target_unit)
        nxt = doc.next_row_start(end_row)
        if nxt is None:
            edits.append(TextEdit(len(doc.text), len(doc.text), doc.newline + text.rstrip("\r\n")))
        else:
            edits.append(TextEdit(nxt, nxt, text))
    else:
        at = doc.row_start(doc.first_row(target_unit))
        edits.append(TextEdit(at, at, text))
    return edits


# --------------------------------------------------------------------------- before_use
def _before_use(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    expr = doc.find(ctx.target)
    if expr is None:
        raise CannotFix("nothing at the use")
    stmt = doc.small_stmt_of(expr) or doc.stmt_of(expr)
    scope = doc.scope_of(stmt)
    idx = scope_index(doc, scope)
    stale = stale_operands(ctx, idx, expr, stmt)
    names = {dotted(o) for o in stale}
    if len(names) != 1 or None in names:
        raise CannotFix("not one stale name")
    name = names.pop()
    assert name is not None
    if "." in name:
        raise CannotFix("not a local name")
    ev = idx.binding_before(name, doc.offsets(stmt)[0])
    b = idx.binding(ev) if ev is not None else None
    if b is None or b.kind != "assign" or b.value is None:
        raise CannotFix("the stale value is not made by a plain assignment")
    define = ev.stmt
    if name in idx.names_read_by(define):
        raise CannotFix("the definition reads its own target")
    freed = ctx.related_row("freed")
    if freed is None or doc.first_row(define) > freed:
        raise CannotFix("the definition does not precede the freeing backward")
    unit = simple_line(doc, define)
    # first statement after the backward that reads the name
    freed_end = doc.row_start(freed + 1) if freed + 1 <= doc.n_rows else len(doc.text)
    first = idx.first_read_after(name, freed_end)
    if first is None:
        raise CannotFix("no use after the backward")
    use_stmt = first.stmt
    # the definition's inputs must not have been rebound in between
    d_end = doc.offsets(define)[1]
    u_start = doc.offsets(use_stmt)[0]
    for r in idx.names_read_by(define):
        cur = idx.binding_before(r, u_start)
        orig = idx.binding_before(r, doc.offsets(define)[0])
        if cur is not None and (orig is None or cur.node is not orig.node) and doc.offsets(cur.stmt)[0] >= d_end:
            raise CannotFix(f"`{r}` changes between the definition and the use")
    target = use_stmt  # a small statement, or a compound statement whose header reads the name
    indent_row = doc.first_row(doc.unit_of(target))
    text = doc.reindented(unit, doc.indent_of_row(indent_row))
    if isinstance(doc.unit_of(target), cst.BaseSmallStatement) or not doc.starts_own_line(doc.unit_of(target)):
        code = doc.code(define)
        return [doc.insert_before(target, code)]
    at = doc.row_start(indent_row)
    return [TextEdit(at, at, text)]


# --------------------------------------------------------------------------- into_loop
def _loop_with_row(doc: Doc, scope: cst.CSTNode, row: int) -> Optional[cst.CSTNode]:
    """Innermost loop of ``scope`` whose body contains ``row``."""
    best = None
    for node in doc.walk(scope):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not scope:
            continue
        if isinstance(node, LOOPS) and doc.has_pos(node.body) and doc.scope_of(node) is scope:
            if doc.first_row(node.body) <= row <= doc.last_row(node.body) or \
                    doc.first_row(node) < row <= doc.last_row(node):
                if best is None or doc.contains(best, node):
                    best = node
    return best


def into_loop(doc: Doc, idx: ScopeIndex, stmts: Sequence[cst.CSTNode], loop: cst.CSTNode) -> List[TextEdit]:
    loop_blocks = block_ancestors(doc, loop)
    copy_only = False
    for s in stmts:
        if doc.offsets(s)[0] >= doc.offsets(loop)[0]:
            raise CannotFix("the value is not built before the loop")
        if doc.parent(doc.unit_of(s)) not in loop_blocks:
            # built in another loop or branch before this one (a GAN's fake, made in the D
            # steps, reused by the G steps): copied, when what it reads is there for sure
            if not _inputs_always_bound(doc, idx, s, loop, loop_blocks):
                raise CannotFix("the definition does not always run before the loop")
            copy_only = True
    header_reads: Set[str] = set()
    if isinstance(loop, cst.For):
        header_reads = {ev.name for ev in idx.events if ev.kind == "read" and
                        doc.offsets(loop.iter)[0] <= ev.start < doc.offsets(loop.iter)[1]}
    elif isinstance(loop, cst.While):
        header_reads = {ev.name for ev in idx.events if ev.kind == "read" and
                        doc.offsets(loop.test)[0] <= ev.start < doc.offsets(loop.test)[1]}
    for s in stmts:
        if idx.names_bound_by(s) & header_reads:
            raise CannotFix("the loop header uses the value")
    body = loop.body
    if not isinstance(body, cst.IndentedBlock) or not body.body:
        raise CannotFix("one-line loop body")
    first = body.body[0]
    loop_s, loop_e = doc.offsets(loop)
    # copy (keep the original) when the value is read outside the loop
    keep = False
    moving = {id(s) for s in stmts}
    for s in stmts:
        s_end = doc.offsets(s)[1]
        for name in idx.names_bound_by(s):
            for ev in idx.events:
                if ev.name == name and ev.kind in ("read", "aug", "mutate") and ev.start >= s_end and \
                        not (loop_s <= ev.start < loop_e) and id(ev.stmt) not in moving:
                    keep = True
    return relocate(doc, idx, stmts, first, after=False, limit_end=doc.offsets(body)[0], keep_any=keep or copy_only)


def _inputs_always_bound(doc: Doc, idx: ScopeIndex, stmt: cst.CSTNode, loop: cst.CSTNode,
                         loop_blocks: Sequence[cst.CSTNode]) -> bool:
    """Is every name ``stmt`` reads bound, when ``loop`` starts, by a statement that always runs
    before it (in a block around the loop), and not rebound in between?"""
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        return False
    loop_start = doc.offsets(loop)[0]
    s_start = doc.offsets(stmt)[0]
    for name in idx.names_read_by(stmt):
        root = name.split(".")[0]
        at_loop = idx.binding_before(root, loop_start)
        if at_loop is None:
            continue  # a global, a builtin or an import of the module
        if at_loop.start >= s_start:
            return False  # rebound after the statement: the copy would read something else
        if doc.parent(doc.unit_of(at_loop.stmt)) not in loop_blocks and not isinstance(at_loop.stmt, cst.FunctionDef):
            return False
    return True


def _into_loop(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    if node is None:
        raise CannotFix("nothing at the target")
    stmt = doc.small_stmt_of(node)
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        raise CannotFix("not an assignment")
    scope = doc.scope_of(stmt)
    row = ctx.related_row("freed") or ctx.related_row("backward")
    if row is None:
        raise CannotFix("no backward")
    loop = _loop_with_row(doc, scope, row)
    if loop is None:
        raise CannotFix("the backward is not in a loop of this scope")
    idx = scope_index(doc, scope)
    if ctx.param("mode") == "into_loop_chain":
        return into_loop(doc, idx, _with_downstream(doc, idx, stmt, loop), loop)
    return into_loop(doc, idx, [stmt], loop)


def _with_downstream(doc: Doc, idx: ScopeIndex, stmt: cst.CSTNode, loop: cst.CSTNode) -> List[cst.CSTNode]:
    """``stmt`` and the assignments after it, in its block and before the loop, that compute
    from what it binds (``logits = x @ W`` then ``probs = logits.softmax(1)``, ``loss = ...``):
    recomputing the first alone in the loop would leave the loss built once, before it."""
    block = doc.block_of(doc.unit_of(stmt))
    if block is None:
        return [stmt]
    _, body, i = block
    loop_start = doc.offsets(loop)[0]
    out = [stmt]
    names = set(idx.names_bound_by(stmt))
    for unit in body[i + 1:]:
        if doc.offsets(unit)[0] >= loop_start:
            break
        if not isinstance(unit, cst.SimpleStatementLine) or len(unit.body) != 1:
            continue
        small = unit.body[0]
        if isinstance(small, (cst.Assign, cst.AnnAssign)) and idx.names_read_by(small) & names:
            out.append(small)
            names |= idx.names_bound_by(small)
    return out


# --------------------------------------------------------------------------- after_step
def _after_step(ctx: FixContext) -> List[TextEdit]:
    p = StepPlan(ctx)
    doc = p.doc
    if p.loop_carried:
        # the later backward runs in the next iteration: the stale value comes from before
        # the loop that holds both
        loops = [l for l in doc.loops_of(p.bstmt, p.scope) if doc.contains(l, p.step)]
        if not loops:
            raise CannotFix("backward before the step outside a loop")
        loop = loops[0]
        if p.model is None:
            raise CannotFix("cannot tell which model the optimizer trains")
        loop_start = doc.offsets(loop)[0]
        chain = deps_closure(doc, p.idx, set(p.roots), p.b_start)
        outside = [s for s in chain if doc.offsets(s)[1] <= loop_start]
        stale = [s for s in outside if references(p.idx.names_read_by(s), p.model)]
        if not stale:
            raise CannotFix("nothing built before the loop through the stepped model")
        return into_loop(doc, p.idx, stale, loop)
    stale = p.stale_statements()
    if not stale:
        raise CannotFix("the later loss does not go through the stepped model before the step")
    names: Set[str] = set()
    for s in stale:
        names |= p.idx.names_bound_by(s)
    if not p.reaches_later_model(names):
        raise CannotFix("the later loss does not train through these values: detach them instead")
    for s in stale:
        if not same_block(doc, s, p.step):
            raise CannotFix("the statements are not in the step's block")
    roots_before = [s for s in stale if p.idx.names_bound_by(s) & p.roots]
    if not roots_before:
        # the later loss is written after the step on purpose from values computed before it:
        # keep them (detach, or move the step) rather than recompute
        raise CannotFix("the later loss is built after the step")
    # the moved statements must read the same inputs after the step
    bound_earlier: Set[str] = set()
    for s in stale:
        s_end = doc.offsets(s)[1]
        reads = p.idx.names_read_by(s) - bound_earlier
        bound_earlier |= p.idx.names_bound_by(s)
        for r in reads:
            cur = p.idx.binding_before(r, p.step_end)
            orig = p.idx.binding_before(r, doc.offsets(s)[0])
            if cur is not None and (orig is None or cur.node is not orig.node) and \
                    all(cur.stmt is not t for t in stale) and doc.offsets(cur.stmt)[0] >= s_end:
                raise CannotFix(f"`{r}` changes before the step")
    # a value the moved statements bind that a statement staying in between binds too: code
    # after the step would now see the moved (recomputed) value instead
    first_stale = doc.offsets(stale[0])[0]
    for name in names:
        rebound = any(ev.name == name and ev.kind in ("bind", "aug") and first_stale <= ev.start < p.step_start
                      and not any(doc.contains(t, ev.node) for t in stale) for ev in p.idx.events)
        if rebound and p.idx.read_after(name, p.step):
            raise CannotFix(f"`{name}` is rebound before the step and read after it")
    return relocate(doc, p.idx, stale, p.step, after=True, limit_end=p.step_start)


_MODES = {
    "before_use": _before_use,
    "into_loop": _into_loop,
    "into_loop_chain": _into_loop,
    "after_step": _after_step,
}
