"""A cheap syntactic pre-pass: which functions and classes could hold an autograd hazard.

Every hazard needs an in-place write (``+=``, ``x[i] = ...``, ``.add_()``, ``inplace=True``,
``out=``, ``.data``, ``nn.init``), a backward, an optimizer step, or a custom autograd
Function. Code that has none of these, and calls no local code that has, cannot be the
place a hazard is caused, so the interpreter does not analyse it on its own (it still runs
it when a caller that matters calls it). This is what keeps the lint fast on large model
libraries, where most ``forward``s are pure.
"""
from __future__ import annotations

import ast
from typing import Dict, Iterable, Set, Union

FuncDef = Union[ast.FunctionDef, ast.AsyncFunctionDef]
_TRIGGER_ATTRS = frozenset({"data", "backward", "step", "save_for_backward", "detach_", "grad", "retain_graph",
                            "mark_dirty", "saved_tensors", "requires_grad_", "apply"})
_TRIGGER_KWARGS = frozenset({"inplace", "out", "retain_graph", "grad_tensors", "fused"})


def _direct(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.AugAssign):
            return True
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            for t in targets:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Store):
                        return True
                    if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and \
                            sub.attr in ("data", "inplace", "requires_grad"):
                        return True
        elif isinstance(n, ast.Attribute):
            a = n.attr
            if a in _TRIGGER_ATTRS or (a.endswith("_") and not a.endswith("__") and len(a) > 1):
                return True
        elif isinstance(n, ast.keyword) and n.arg in _TRIGGER_KWARGS:
            if not (isinstance(n.value, ast.Constant) and n.value.value in (False, None)):
                return True
        elif isinstance(n, ast.Name) and n.id in ("autograd", "inplace"):
            return True
    return False


def _called_names(node: ast.AST) -> Set[str]:
    out: Set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name):
                out.add(f.id)
            elif isinstance(f, ast.Attribute):
                out.add(f.attr)
        elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)  # classes passed around (nn.Sequential(*[Block(...)]) or as act_layer=...)
    return out


def interesting_defs(tree: ast.Module) -> Set[int]:
    """ids of the FunctionDef and ClassDef nodes worth analysing on their own."""
    defs: Dict[str, list] = {}
    direct: Dict[int, bool] = {}
    calls: Dict[int, Set[str]] = {}
    classes: Dict[int, ast.ClassDef] = {}
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(n.name, []).append(n)
            direct[id(n)] = _direct(n)
            calls[id(n)] = _called_names(n)
        elif isinstance(n, ast.ClassDef):
            defs.setdefault(n.name, []).append(n)
            classes[id(n)] = n
            is_fn = any(isinstance(b, ast.Attribute) and b.attr == "Function" or
                        isinstance(b, ast.Name) and b.id == "Function" for b in n.bases)
            direct[id(n)] = is_fn or any(direct.get(id(m), False) or _direct(m) for m in n.body
                                         if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)))
            calls[id(n)] = set().union(*[_called_names(m) for m in n.body]) if n.body else set()
    interesting = {k for k, v in direct.items() if v}
    changed = True
    while changed:  # propagate through syntactic calls by name
        changed = False
        for key, names in calls.items():
            if key in interesting:
                continue
            if any(id(d) in interesting for name in names for d in defs.get(name, ())):
                interesting.add(key)
                changed = True
    # A method is interesting when its class is (its __init__ may build in-place modules).
    for cid, cls in classes.items():
        if cid in interesting:
            for m in cls.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    interesting.add(id(m))
    return interesting


def iter_defs(tree: ast.Module) -> Iterable[ast.AST]:
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield n
