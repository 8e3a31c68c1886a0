"""A function body's own nodes: what runs when the function runs, not its nested scopes."""
from __future__ import annotations

import ast
from typing import Iterator

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def own_nodes(fdef: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested defs, lambdas and classes
    (their bodies run later, or never)."""
    stack = list(ast.iter_child_nodes(fdef))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, _NESTED):
            stack.extend(ast.iter_child_nodes(n))
