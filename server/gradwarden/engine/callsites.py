"""Where a module calls its own functions, and in which grad mode.

A function the module's own execution never reaches is analysed on its own. When every call
to it in the file sits inside ``with torch.no_grad():`` (or ``inference_mode``, or a function
decorated with one of them), its body runs without grad: analysing it with grad on would
report in-place writes on parameters that are fine (a weight-copying helper).
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional

_NO_GRAD = ("no_grad", "inference_mode")


def _is_no_grad(expr: ast.expr) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    if name == "set_grad_enabled" and isinstance(expr, ast.Call) and expr.args:
        arg = expr.args[0]
        return isinstance(arg, ast.Constant) and arg.value is False
    return name in _NO_GRAD


class CallSites:
    """Calls by name (``f(...)``, ``self.f(...)``, ``obj.f(...)``) with their grad mode."""

    def __init__(self, tree: ast.Module, text: Optional[str] = None) -> None:
        self.calls: Dict[str, List[tuple]] = {}  # name -> [(enclosing def or None, under no_grad)]
        # Only calls under a no-grad region can change an answer of grad_mode_of, and such a
        # region names one of these words in the module's text (``text``: the source, when
        # known); without them the walk would find nothing but calls made with grad on.
        if text is None or any(word in text for word in _NO_GRAD + ("set_grad_enabled",)):
            self._walk(tree, None, False)

    def _walk(self, tree: ast.AST, fdef: Optional[ast.AST], no_grad: bool) -> None:
        # Iterative, with the fields read directly: ast.iter_child_nodes' generators cost more
        # than the rest of this walk on large modules. (The order of the calls recorded does
        # not matter: grad_mode_of only asks whether any / all of them are under no_grad.)
        AST, FuncDefs, Withs, Call, Attribute = ast.AST, (ast.FunctionDef, ast.AsyncFunctionDef), \
            (ast.With, ast.AsyncWith), ast.Call, ast.Attribute
        leaves = {ast.Name, ast.Constant}  # nothing under them (a third of the nodes): not visited
        calls = self.calls
        todo = [(tree, fdef, no_grad)]
        while todo:
            node, fdef, no_grad = todo.pop()
            for field in node._fields:
                value = getattr(node, field, None)
                if isinstance(value, list):
                    children = [c for c in value if isinstance(c, AST)]
                elif isinstance(value, AST):
                    children = [value]
                else:
                    continue
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
        sites = [ng for where, ng in self.calls.get(getattr(fn, "name", ""), ()) if where is not fn]
        if sites and not any(s is False for s in sites):
            return False
        return None
