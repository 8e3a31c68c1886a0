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


def has_trigger(node: ast.AST) -> bool:
    """Does this statement (or function) contain anything that can cause a hazard?"""
    return _direct(node)


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


def _calls(fn: ast.AST) -> Set[tuple]:
    """Calls we can resolve by name: ("func", name) for foo(...), ("self", name) for self.meth(...)."""
    out: Set[tuple] = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name):
                out.add(("func", f.id))
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
                out.add(("self", f.attr))
    return out


def interesting_defs(tree: ast.Module) -> Set[int]:
    """ids of the FunctionDef and ClassDef nodes worth analysing on their own: those with a
    trigger, and those that call (resolvably) a function or method that has one."""
    funcs: Dict[str, list] = {}
    owner: Dict[int, Dict[str, list]] = {}  # method id -> its class's methods by name
    direct: Dict[int, bool] = {}
    calls: Dict[int, Set[tuple]] = {}
    class_ids: Dict[int, list] = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.ClassDef):
            methods: Dict[str, list] = {}
            for m in n.body:
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods.setdefault(m.name, []).append(m)
                    owner[id(m)] = methods
            class_ids[id(n)] = [m for ms in methods.values() for m in ms]
            if any(isinstance(b, ast.Attribute) and b.attr == "Function" or
                   isinstance(b, ast.Name) and b.id == "Function" for b in n.bases):
                direct[id(n)] = True
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
            funcs.setdefault(n.name, []).append(n)
            direct[id(n)] = _direct(n)
            calls[id(n)] = _calls(n)
    interesting = {k for k, v in direct.items() if v}
    changed = True
    while changed:
        changed = False
        for key, cs in calls.items():
            if key in interesting:
                continue
            for kind, name in cs:
                targets = funcs.get(name, ()) if kind == "func" else owner.get(key, {}).get(name, ())
                if any(id(t) in interesting for t in targets):
                    interesting.add(key)
                    changed = True
                    break
    for cid, methods in class_ids.items():
        if cid in interesting or any(id(m) in interesting for m in methods):
            interesting.add(cid)
            if cid in direct:  # an autograd.Function: forward and backward go together
                interesting.update(id(m) for m in methods)
    return interesting
