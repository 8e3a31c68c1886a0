"""A loop-carried state detached at every iteration of the loop that builds it (GW733).

``for t in range(T): h = self.cell(x[:, t], h.detach())`` with the loss made after the loop from the
last ``h``: every iteration cuts the state it was handed, so the backward goes through the last
iteration only; the earlier time steps (their inputs, and the weights' use at those steps) get no
gradient. Nothing raises and every parameter still gets a gradient from the last step, so the
gradient-reach check (GW719) has nothing to say; the run proves it the same way (``gradwarden
debug``'s GW733, ``runtime/child/recurrent.py``).

Decided from what the run of the analysis saw and the loop's code together: the ``.detach()`` cut a
value that required grad, and a backwarded loss went on to use what was computed from it
(``reach.used``); the detached name is the state the same statement rebinds, bound before the loop
and read after it; and the loop runs no backward or step of its own (truncated BPTT detaches once per
chunk and backwards inside the chunk loop) and reads the state nowhere else (a refinement whose every
iteration's output is collected into the loss detaches on purpose: RAFT's flow updates)."""
from __future__ import annotations

import ast
from typing import Any, Dict, Iterator, List, Optional, Set

from gradwarden.engine.events import Event

_STEPPING = frozenset({"backward", "step", "grad", "zero_grad"})


def check_detached_states(flow: Any) -> None:
    reach = flow.reach
    spots = {(c.span.row, c.span.column) for c in reach.sources
             if c.kind == "detach" and c in reach.used and c.span is not None and c.span.file is None}
    if not spots:
        return
    parents: Dict[int, ast.AST] = {}
    for node in ast.walk(flow.it.tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    done: Set[int] = set()
    for node in ast.walk(flow.it.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach"
                and not node.args and isinstance(node.func.value, ast.Name)
                and (node.lineno, node.col_offset + 1) in spots):
            continue
        name = node.func.value.id
        stmt = _statement(node, parents)
        loop = _loop(stmt, parents) if stmt is not None else None
        if stmt is None or loop is None or id(stmt) in done or not _rebinds(stmt, name, node):
            continue
        fn = _function(loop, parents)
        if fn is None or not _bound_before(fn, loop, name) or not _read_after(fn, loop, name):
            continue
        if _steps(loop) or _read_elsewhere(loop, stmt, name):
            continue
        done.add(id(stmt))
        flow.it.emit(Event("state_detached_every_step", flow.it.span_of(stmt), {
            "name": name, "loop_line": loop.lineno}))


def _statement(node: ast.AST, parents: Dict[int, ast.AST]) -> Optional[ast.stmt]:
    cur: Optional[ast.AST] = node
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = parents.get(id(cur))
    return cur if isinstance(cur, (ast.Assign, ast.AnnAssign)) else None


def _loop(stmt: ast.stmt, parents: Dict[int, ast.AST]) -> Optional[ast.AST]:
    """The innermost loop whose body holds ``stmt`` (in the same function)."""
    cur = parents.get(id(stmt))
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(cur, (ast.For, ast.While)):
            return cur
        cur = parents.get(id(cur))
    return None


def _function(loop: ast.AST, parents: Dict[int, ast.AST]) -> Optional[ast.AST]:
    cur = parents.get(id(loop))
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        cur = parents.get(id(cur))
    return cur


def _targets(stmt: ast.stmt) -> Iterator[ast.expr]:
    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]):  # type: ignore[attr-defined]
        yield from (t.elts if isinstance(t, ast.Tuple) else [t])


def _rebinds(stmt: ast.stmt, name: str, detach: ast.Call) -> bool:
    """``h = f(..., h.detach())`` (or ``h, c = cell(x, (h.detach(), c.detach()))``): the statement
    binds the detached name again from a call the detached value is handed to (not ``h = h.detach()``)."""
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.Call) and value is not detach and \
        any(isinstance(t, ast.Name) and t.id == name for t in _targets(stmt))


def _own(body: List[ast.stmt]) -> Iterator[ast.AST]:
    stack: List[ast.AST] = list(body)
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in ast.iter_child_nodes(n)
                     if not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def _bound_before(fn: ast.AST, loop: ast.AST, name: str) -> bool:
    for n in _own(getattr(fn, "body", [])):
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) and n.lineno < loop.lineno:  # type: ignore[attr-defined]
            return True
    return False


def _read_after(fn: ast.AST, loop: ast.AST, name: str) -> bool:
    end = getattr(loop, "end_lineno", None) or loop.lineno  # type: ignore[attr-defined]
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > end
               for n in _own(getattr(fn, "body", [])))


def _steps(loop: ast.AST) -> bool:
    """The loop backwards or steps itself (truncated BPTT, a training loop)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _STEPPING
               for n in _own(loop.body))  # type: ignore[attr-defined]


def _read_elsewhere(loop: ast.AST, stmt: ast.stmt, name: str) -> bool:
    """The state is read in the loop outside the statement that rebinds it (collected, scored, logged)."""
    inside = {id(n) for n in ast.walk(stmt)}
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in inside
               for n in _own(loop.body))  # type: ignore[attr-defined]
