"""Class creation in the user's code: a ``class`` statement's ``ClassInfo`` from its bases, and
what Python runs when the class is made beyond its body — a parent's ``__init_subclass__`` (a
registry filled by ``class Head(BaseHead, name="smooth")``), the mutable containers the body
binds (``registry = {}``: one dict shared by the class and every reader, held in the path's state
so that a store into it is seen by a later lookup) — and an ``Enum``'s lookup of a member by its
value (``Arch("mlp")``: members are read as their values, so the lookup is that value).
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from gradwarden.engine.interp.interpreter import ClassInfo, FuncNode
from gradwarden.engine.interp.projects import DECORATOR_WORK
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import ConstV, RefV, State, UNKNOWN, Value, fresh_id, ref_value

_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum"})


def build_class_info(it: Any, stmt: ast.ClassDef, st: State) -> ClassInfo:
    bases = [it.ev.eval(b, st) for b in stmt.bases]
    info = ClassInfo(stmt.name, stmt, bases)
    info.oid = fresh_id()
    for b in bases:
        if isinstance(b, RefV) and b.kind == "class":
            info.parents.append(b.target)
            info.is_module |= b.target.is_module
            info.is_function |= b.target.is_function
            info.torch_base = info.torch_base or b.target.torch_base
            info.dict_base |= b.target.dict_base
            info.enum_base |= b.target.enum_base
        elif isinstance(b, RefV) and b.kind == "builtin" and b.name in ("dict", "collections.OrderedDict"):
            info.dict_base = True
        elif isinstance(b, RefV) and b.kind == "builtin" and b.name in _ENUM_BASES:
            info.enum_base = True
        elif isinstance(b, RefV) and b.kind == "torch":
            info.torch_base = b.name
            if b.name in ("torch.autograd.Function", "torch.autograd.function.Function"):
                info.is_function = True
            elif b.name.startswith("torch.nn."):
                info.is_module = True
    for item in stmt.body:
        if isinstance(item, FuncNode):
            info.methods[item.name] = item
        elif isinstance(item, ast.Assign):
            for t in item.targets:
                if isinstance(t, ast.Name):
                    info.class_attrs[t.id] = item.value
    return info


def class_created(it: Any, stmt: ast.ClassDef, info: ClassInfo, cls: Value, st: State) -> None:
    """What Python runs once the class exists: its dict displays bound as one shared value each,
    then the nearest parent's ``__init_subclass__`` with the class keywords, run (as a class
    decorator is, ``projects.class_decorators``) on a fork within ``DECORATOR_WORK`` statement
    visits; one that needs more, or stops, is given up and the path goes on as if it had not run."""
    for name, expr in info.class_attrs.items():
        if isinstance(expr, ast.Dict) and not expr.keys:
            st.set_attr(info.oid, name, it.ev.eval(expr, st))
    hook = next((found for p in info.parents for found in [p.find_method("__init_subclass__")] if found), None)
    if hook is None:
        return
    work = st.fork()
    limit, it.budget.limit = it.budget.limit, DECORATOR_WORK
    try:
        with it.allotment(stmt, quiet=True):
            kwargs: Dict[str, Value] = {k.arg: it.ev.eval(k.value, work) for k in stmt.keywords
                                        if k.arg is not None and k.arg != "metaclass"}
            it.ev.call(ref_value("method", "__init_subclass__", hook, cls), [], kwargs, work, stmt)
    except Halt:
        return
    finally:
        it.budget.limit = limit
    st.become(work)


def class_value(info: ClassInfo, attr: str, st: State) -> Optional[Value]:
    """``Cls.registry``: the shared container the class (or a parent) bound in its body, if this path made it."""
    for c in _mro(info):
        v = st.attrs(c.oid).get(attr) if c.oid else None
        if v is not None:
            return v
        if attr in c.class_attrs:
            return None
    return None


def _mro(info: ClassInfo, seen: Optional[List[ClassInfo]] = None) -> List[ClassInfo]:
    out = seen if seen is not None else []
    if info not in out:
        out.append(info)
        for p in info.parents:
            _mro(p, out)
    return out


def enum_member(info: ClassInfo, args: List[Value]) -> Value:
    """``Arch(value)`` of an ``Enum``: the member with that value, read as its value (``Arch.MLP``
    reads as ``"mlp"``): the value when a member of the class (or a parent) has it, else unknown."""
    if len(args) != 1 or not isinstance(args[0], ConstV):
        return UNKNOWN
    want = args[0].value
    for c in _mro(info):
        for expr in c.class_attrs.values():
            if isinstance(expr, ast.Constant) and type(expr.value) is type(want) and expr.value == want:
                return ConstV(want)
    return UNKNOWN
