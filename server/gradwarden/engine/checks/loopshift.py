"""A shift register written by hand in the wrong direction: a loop over ``range`` that copies each
slot from the one before it (``for t in range(1, T): x[:, t] = x[:, t - 1]``). Every write is to a
slot of its own, so no single write overlaps and nothing raises, but each iteration reads the slot
the iteration before it just wrote: the first slot ends up copied into every later one (values and
gradients smeared). Running the loop the other way (``range(T - 1, 0, -1)``) or reading from a copy
is the fix, so the ``for`` line is the one reported.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional, Tuple


def _step(call: ast.Call) -> Optional[int]:
    """The step of ``range(...)`` when the code fixes its sign (1 when not given)."""
    if len(call.args) < 3:
        return 1 if call.args else None
    s = call.args[2]
    if isinstance(s, ast.Constant) and isinstance(s.value, int) and not isinstance(s.value, bool):
        return s.value
    if isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub) and isinstance(s.operand, ast.Constant) \
            and isinstance(s.operand.value, int):
        return -s.operand.value
    return None


def _parts(sub: ast.Subscript) -> List[ast.expr]:
    return list(sub.slice.elts) if isinstance(sub.slice, ast.Tuple) else [sub.slice]


def _mentions(node: ast.AST, var: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == var for n in ast.walk(node))


def _offset(p: ast.expr, var: str) -> Optional[int]:
    """``var - k`` -> -k, ``var + k`` -> k (k a positive int literal); else None."""
    if isinstance(p, ast.BinOp) and isinstance(p.left, ast.Name) and p.left.id == var and \
            isinstance(p.right, ast.Constant) and isinstance(p.right.value, int) and \
            not isinstance(p.right.value, bool) and p.right.value > 0:
        if isinstance(p.op, ast.Sub):
            return -p.right.value
        if isinstance(p.op, ast.Add):
            return p.right.value
    return None


def _smearing_copy(stmt: ast.stmt, var: str, step: int) -> Optional[Tuple[ast.Subscript, ast.Subscript]]:
    """``x[..., var, ...] = x[..., var - k, ...]`` (or ``.copy_`` of it) in a loop whose index runs
    towards the slots it reads from: the (destination, source) subscripts."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        dst, src = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr == "copy_" and len(stmt.value.args) == 1:
        dst, src = stmt.value.func.value, stmt.value.args[0]
    else:
        return None
    if not (isinstance(dst, ast.Subscript) and isinstance(src, ast.Subscript)) or \
            ast.dump(dst.value) != ast.dump(src.value) or _mentions(dst.value, var):
        return None
    a, b = _parts(dst), _parts(src)
    if len(a) != len(b):
        return None
    moved = [i for i, (x, y) in enumerate(zip(a, b)) if ast.dump(x) != ast.dump(y)]
    if len(moved) != 1:
        return None
    i = moved[0]
    if not (isinstance(a[i], ast.Name) and a[i].id == var) or any(_mentions(x, var) for j, x in enumerate(a) if j != i):
        return None
    off = _offset(b[i], var)
    if off is None or (off < 0) != (step > 0):
        return None  # reads a slot the loop has not reached yet: a correct shift
    return dst, src


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    """Every statement of ``tree``, nested blocks included. A ``for`` is a statement, and
    statements sit only in blocks (bodies, ``else``/``finally`` blocks, handlers, ``case``s),
    never inside an expression: walking the blocks alone visits a few percent of the nodes
    ``ast.walk`` would (the file's every expression), and finds the same loops."""
    stack: List[ast.AST] = list(getattr(tree, "body", ()))
    while stack:
        node = stack.pop()
        yield node  # type: ignore[misc]
        for field in _BLOCKS:
            block = getattr(node, field, None)
            if block:
                stack.extend(block)
        for part in getattr(node, "handlers", ()) or getattr(node, "cases", ()):
            stack.extend(part.body)


_BLOCKS = ("body", "orelse", "finalbody")


def smearing_loops(tree: ast.AST) -> Dict[int, ast.For]:
    """id(statement) -> the ``for`` loop over ``range`` whose body copies each slot from one the
    loop wrote before it."""
    found: Dict[int, ast.For] = {}
    for node in _statements(tree):
        if not (node.__class__ is ast.For and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call)
                and isinstance(node.iter.func, ast.Name) and node.iter.func.id == "range"):
            continue
        step = _step(node.iter)
        if not step:
            continue
        for stmt in node.body:
            if _smearing_copy(stmt, node.target.id, step) is not None:
                found[id(stmt)] = node
    return found
