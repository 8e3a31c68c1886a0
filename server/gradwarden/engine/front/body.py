"""Where a definition's code lies: its first row (its decorators'), and a function body's own
nodes (what runs when the function runs, not its nested scopes)."""
from __future__ import annotations

import ast
from typing import Iterator

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def first_row(node: ast.AST) -> int:
    """The node's first row: its first decorator's, for a decorated definition (a def's own
    ``lineno`` is its ``def`` line)."""
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])  # type: ignore[attr-defined]


def own_nodes(fdef: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested defs, lambdas and classes
    (their bodies run later, or never)."""
    stack = list(ast.iter_child_nodes(fdef))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _NESTED):
            stack.extend(ast.iter_child_nodes(n))
