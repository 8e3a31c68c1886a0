"""Dataclasses of the user's code (``@dataclass class TrainConfig: lr: float = 0.05``): the
``__init__`` the decorator generates, binding each field from the constructor's arguments or
its default, so that ``cfg.lr`` and ``cfg.callbacks`` of an instance are the values the program
runs with. A ``field(default_factory=...)`` is called for each instance when it is a builtin
container (``list``, ``dict``) or a lambda of literals; any other default that is not a known
immutable value stays unknown.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.state.model import ConstV, NumberV, RefV, State, UNKNOWN, UnknownV, Value

_DECORATORS = ("dataclasses.dataclass",)
_FACTORIES = ("list", "dict", "set", "tuple")


def _is_dataclass_decorator(it: Any, dec: ast.expr, st: State) -> bool:
    fn = it.ev.eval(dec.func if isinstance(dec, ast.Call) else dec, st)
    return isinstance(fn, RefV) and fn.kind == "builtin" and fn.name in _DECORATORS


def _class_var(ann: ast.expr) -> bool:
    head = ann.value if isinstance(ann, ast.Subscript) else ann
    name = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
    return name in ("ClassVar", "InitVar")


def _literal_lambda(v: Value) -> bool:
    """A lambda whose body reads no name (``lambda: ["logger", "max_norm"]``): calling it later,
    from whichever module, gives the same value."""
    if not (isinstance(v, RefV) and v.kind == "lambda"):
        return False
    lam = v.target[0] if isinstance(v.target, tuple) else v.target
    return isinstance(lam, ast.Lambda) and not any(isinstance(n, ast.Name) for n in ast.walk(lam.body))


def _default(it: Any, expr: ast.expr, st: State) -> Tuple[str, Value]:
    """A field's default as ``("value", v)``, ``("factory", f)`` or ``("unknown", UNKNOWN)``."""
    if isinstance(expr, ast.Call):
        fn = it.ev.eval(expr.func, st)
        if isinstance(fn, RefV) and fn.kind == "builtin" and fn.name == "dataclasses.field":
            for kw in expr.keywords:
                if kw.arg == "default":
                    return _default(it, kw.value, st)
                if kw.arg == "default_factory":
                    f = it.ev.eval(kw.value, st)
                    if isinstance(f, RefV) and (f.kind == "builtin" and f.name in _FACTORIES or _literal_lambda(f)):
                        return "factory", f
                    return "unknown", UNKNOWN
            return "required", UNKNOWN
    v = it.ev.eval(expr, st)
    if isinstance(v, (ConstV, NumberV)) or isinstance(v, RefV) and v.kind in ("class", "func", "builtin", "torch"):
        return "value", v  # immutable: shared by every instance, as Python shares it
    return "unknown", UNKNOWN


def note_dataclass(it: Any, stmt: ast.ClassDef, info: Any, st: State) -> None:
    """``stmt`` decorated with ``@dataclass`` (``@dataclasses.dataclass(frozen=True)``): record its
    fields, in order, with their defaults evaluated where the class is defined."""
    if not any(_is_dataclass_decorator(it, d, st) for d in stmt.decorator_list):
        return
    fields: List[Tuple[str, str, Value]] = []
    for item in stmt.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not _class_var(item.annotation):
            kind, v = _default(it, item.value, st) if item.value is not None else ("required", UNKNOWN)
            fields.append((item.target.id, kind, v))
    info.dataclass_fields = fields


def _all_fields(info: Any) -> Optional[List[Tuple[str, str, Value]]]:
    """The fields of the class and of its dataclass bases (bases first, a redefined field keeps
    its place), or None when no class in its hierarchy is a dataclass."""
    out: Dict[str, Tuple[str, str, Value]] = {}
    seen = False
    for p in reversed(info.parents):
        inherited = _all_fields(p)
        if inherited is not None:
            seen = True
            out.update((f[0], f) for f in inherited)
    own = getattr(info, "dataclass_fields", None)
    if own is not None:
        seen = True
        out.update((f[0], f) for f in own)
    return list(out.values()) if seen else None


def init_dataclass(it: Any, info: Any, obj: Any, args: List[Value], kwargs: Dict[str, Value], st: State,
                   span: Any, node: ast.AST) -> bool:
    """Run the generated ``__init__`` of ``info`` on ``obj`` (then its ``__post_init__``); False
    when ``info`` is not a dataclass."""
    fields = _all_fields(info)
    if fields is None:
        return False
    for i, (name, kind, default) in enumerate(fields):
        if i < len(args):
            v = args[i]
        elif name in kwargs:
            v = kwargs[name]
        elif kind == "value":
            v = default
        elif kind == "factory":
            v = it.ev.call(default, [], {}, st, node)
        else:
            v = UNKNOWN
        if not isinstance(v, UnknownV):
            st.set_attr(obj.oid, name, v)
    post = info.find_method("__post_init__")
    if post:
        it.calls.call_function(post[1], [obj], {}, st, span, bound_self=True)
    return True
