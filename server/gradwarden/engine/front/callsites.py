"""Where a module calls its own functions, and in which grad mode.

A function the module's own execution never reaches is analysed on its own. When every call
to it in the file sits inside ``with torch.no_grad():`` (or ``inference_mode``, or a function
decorated with one of them), its body runs without grad: analysing it with grad on would
report in-place writes on parameters that are fine (a weight-copying helper).
"""
from __future__ import annotations

import ast
import re
from bisect import bisect_left, bisect_right
from typing import Dict, Iterator, List, Optional, Set

from gradwarden.engine.front.body import first_row

# The context managers (and decorators) that run their block with gradients off; one list for
# every room that asks (checks/flow, domain/modules, incremental/unitcache).
GRAD_OFF_CONTEXTS = ("no_grad", "inference_mode")


def _is_no_grad(expr: ast.expr) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    if name == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
        arg = expr.args[0]
        return isinstance(arg, ast.Constant) and arg.value is False
    return name in GRAD_OFF_CONTEXTS


class CallSites:
    """Calls by name (``f(...)``, ``self.f(...)``, ``obj.f(...)``) with their grad mode."""

    def __init__(self, tree: ast.Module, text: Optional[str] = None) -> None:
        self._tree = tree
        self._calls: Optional[Dict[str, List[tuple]]] = None  # the full walk, made when needed
        # Only calls under a no-grad region can change an answer of grad_mode_of, and such a
        # region names one of these words in the module's text (``text``: the source, when
        # known); without them the walk would find nothing but calls made with grad on.
        self._word_rows: Optional[List[int]] = None  # rows naming a no-grad word (None: unknown)
        if text is not None:
            if not any(word in text for word in GRAD_OFF_CONTEXTS + ("set_grad_enabled",)):
                self._calls = {}
            elif "\r" not in text:  # rows counted at "\n" only
                self._word_rows = _rows_of(_NO_GRAD_WORD, text)
        # The names called somewhere under no_grad, from a walk of the no-grad regions only
        # (a small part of a module): a function whose name is not among them has an answer
        # (None) without the walk of the whole module.
        self._under_no_grad: Optional[Set[str]] = None

    @property
    def calls(self) -> Dict[str, List[tuple]]:
        """name -> [(enclosing def or None, under no_grad)], every call of the module."""
        if self._calls is None:
            self._calls = {}
            self._walk(self._tree, None, False)
        return self._calls

    def _walk(self, tree: ast.AST, fdef: Optional[ast.AST], no_grad: bool) -> None:
        # Iterative, with the fields read directly: ast.iter_child_nodes' generators cost more
        # than the rest of this walk on large modules. (The order of the calls recorded does
        # not matter: grad_mode_of only asks whether any / all of them are under no_grad.)
        AST, FuncDefs, Withs, Call, Attribute = ast.AST, (ast.FunctionDef, ast.AsyncFunctionDef), \
            (ast.With, ast.AsyncWith), ast.Call, ast.Attribute
        leaves = {ast.Name, ast.Constant}  # nothing under them (a third of the nodes): not visited
        calls = self._calls
        todo = [(tree, fdef, no_grad)]
        while todo:
            node, fdef, no_grad = todo.pop()
            for children in _child_lists(node, AST):
                for child in children:
                    child_def, child_ng = fdef, no_grad
                    if isinstance(child, FuncDefs):
                        child_def = child
                        child_ng = any(_is_no_grad(d) for d in child.decorator_list)
                    elif isinstance(child, Withs) and any(_is_no_grad(i.context_expr) for i in child.items):
                        child_ng = True
                    elif isinstance(child, Call):
                        f = child.func
                        name = f.attr if isinstance(f, Attribute) else getattr(f, "id", None)
                        if name:
                            calls.setdefault(name, []).append((fdef, no_grad))
                    if child.__class__ not in leaves and child._fields:
                        todo.append((child, child_def, child_ng))

    def grad_mode_of(self, fn: ast.AST) -> Optional[bool]:
        """False when ``fn`` is called in this file, and only under no_grad (calls from its
        own body do not count); None when that cannot be said."""
        name = getattr(fn, "name", "")
        if self._calls is None and name not in self.names_under_no_grad():
            return None  # no call of it under no_grad: none, or some with grad on
        sites = [ng for where, ng in self.calls.get(name, ()) if where is not fn]
        if sites and not any(s is False for s in sites):
            return False
        return None

    def names_under_no_grad(self) -> Set[str]:
        """The names of the calls that ``_walk`` records as made under no_grad (the same set as
        its records with the flag set), found by walking the statements for no-grad regions
        and only those regions' expressions."""
        if self._under_no_grad is None:
            if self._calls is not None:
                self._under_no_grad = {n for n, sites in self._calls.items() if any(ng for _, ng in sites)}
            else:
                self._under_no_grad = names = set()
                body = self._tree.body
                if self._word_rows is not None:  # only the statements that name a no-grad word
                    rows = self._word_rows
                    body = [stmt for stmt in body
                            if bisect_left(rows, first_row(stmt)) < bisect_right(rows, stmt.end_lineno or stmt.lineno)]
                for region in _no_grad_regions(body):
                    _call_names(region, names)
        return self._under_no_grad


_FUNC_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NO_GRAD_WORD = re.compile(r"no_grad|inference_mode|set_grad_enabled")


def _rows_of(pattern: "re.Pattern[str]", text: str) -> List[int]:
    """The rows (1-based, ascending) holding a match of ``pattern``."""
    rows: List[int] = []
    row, pos = 1, 0
    for m in pattern.finditer(text):
        row += text.count("\n", pos, m.start())
        pos = m.start()
        rows.append(row)
    return rows


def _child_lists(node: ast.AST, AST: type = ast.AST) -> List[List[ast.AST]]:
    """The child nodes of ``node``, one list per field that holds any (read from the fields
    directly: ast.iter_child_nodes' generators cost more than the walks that use this)."""
    out = []
    for field in node._fields:
        value = getattr(node, field, None)
        if isinstance(value, list):
            out.append([c for c in value if isinstance(c, AST)])
        elif isinstance(value, AST):
            out.append([value])
    return out


def _no_grad_regions(body: List[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes ``CallSites._walk`` enters with no_grad set: a def decorated with no_grad, a
    ``with`` naming it (statements only: a def or a with is never inside an expression)."""
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, _FUNC_DEFS):
            if any(_is_no_grad(d) for d in stmt.decorator_list):
                yield stmt
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            if any(_is_no_grad(i.context_expr) for i in stmt.items):
                yield stmt
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(stmt, field, None)
            if sub:
                todo.extend(s for s in sub if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()) or ():
            todo.extend(handler.body)
        for case in getattr(stmt, "cases", ()) or ():
            todo.extend(case.body)


def _call_names(region: ast.AST, names: Set[str]) -> None:
    """Add the names of the calls inside ``region`` that run under its no_grad: not those in
    a def without a no-grad decorator of its own (``_walk`` turns the flag off there; a no-grad
    region inside such a def is one of ``_no_grad_regions``)."""
    AST, Call, Attribute = ast.AST, ast.Call, ast.Attribute
    todo = [region]
    while todo:
        node = todo.pop()
        for children in _child_lists(node, AST):
            for child in children:
                if isinstance(child, _FUNC_DEFS):
                    continue  # its own region when decorated, else run with grad on
                if isinstance(child, Call):
                    f = child.func
                    name = f.attr if isinstance(f, Attribute) else getattr(f, "id", None)
                    if name:
                        names.add(name)
                if child._fields:
                    todo.append(child)
