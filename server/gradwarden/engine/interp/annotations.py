"""What an argument's annotation or default says about it, read from the code: not a tensor
(``src: list[Tensor]``, ``stats=collections.Counter()``), or a Python number
(``n: int``, ``size: tuple[int, int]``). An argument nobody in view passes (a function analysed
on its own, an object built without its constructor's arguments) is read this way.
"""
from __future__ import annotations

import ast
from typing import Optional


_NON_TENSOR_TYPES = frozenset({"list", "List", "tuple", "Tuple", "dict", "Dict", "Sequence", "Iterable", "Mapping",
                               "set", "Set", "int", "float", "bool", "str", "bytes", "Callable", "Iterator",
                               "MutableMapping", "MutableSequence", "OrderedDict", "ModuleList", "Module"})


def not_a_tensor(ann: ast.expr) -> bool:
    """Does an annotation say the value is not a tensor (``list[Tensor]``, ``Optional[dict]``,
    ``int | None``)? ``Tensor``, ``Optional[Tensor]`` and anything unknown: no."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return False
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):  # X | None
        parts = [p for p in (ann.left, ann.right) if not (isinstance(p, ast.Constant) and p.value is None)]
        return bool(parts) and all(not_a_tensor(p) for p in parts)
    if isinstance(ann, ast.Subscript):
        head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        if head in ("Optional", "Union"):
            inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            inner = [p for p in inner if not (isinstance(p, ast.Constant) and p.value is None)]
            return bool(inner) and all(not_a_tensor(p) for p in inner)
        return head in _NON_TENSOR_TYPES
    name = ann.attr if isinstance(ann, ast.Attribute) else getattr(ann, "id", "")
    return name in _NON_TENSOR_TYPES


_NUMBER_TYPES = frozenset({"int", "float", "bool", "complex"})
_SEQ_TYPES = frozenset({"tuple", "Tuple", "list", "List", "Sequence", "Iterable", "MutableSequence"})


def numbers_annotation(ann: ast.expr) -> Optional[str]:
    """"number" for ``int``/``float``/``bool``, "numbers" for a tuple or list of them
    (``tuple[int, int]``, ``Sequence[float]``, ``tuple[int, ...]``), else None. An
    ``Optional``/``| None`` wrapper or a string annotation is read through."""
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        parts = [p for p in (ann.left, ann.right) if not (isinstance(p, ast.Constant) and p.value is None)]
        kinds = {numbers_annotation(p) for p in parts}
        return kinds.pop() if len(kinds) == 1 else None
    name = ann.attr if isinstance(ann, ast.Attribute) else getattr(ann, "id", None)
    if name in _NUMBER_TYPES:
        return "number"
    if isinstance(ann, ast.Subscript):
        head = ann.value.attr if isinstance(ann.value, ast.Attribute) else getattr(ann.value, "id", "")
        inner = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        inner = [p for p in inner if not (isinstance(p, ast.Constant) and p.value in (None, Ellipsis))]
        if head == "Optional" and len(inner) == 1:
            return numbers_annotation(inner[0])
        if head in _SEQ_TYPES and inner and all(numbers_annotation(p) == "number" for p in inner):
            return "numbers"
    return None


def not_tensor_default(default: ast.expr, tree: ast.Module) -> bool:
    """A default that is not a tensor: a string, a container literal, or a call of a class or
    function that is not torch's (``collections.Counter()``, ``dict()``); a call of a function
    of this module or of an unknown name may build a tensor (``None`` may stand for one)."""
    if isinstance(default, ast.Constant):
        return isinstance(default.value, (str, bytes, bool))
    if isinstance(default, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp,
                            ast.Lambda, ast.JoinedStr)):
        return True
    if isinstance(default, ast.Call):
        root = default.func
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return False
        if root.id in _BUILTIN_CONTAINERS:
            return True
        for stmt in tree.body:  # an import of a module that is not torch's
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if (a.asname or a.name.split(".")[0]) == root.id:
                        return not a.name.startswith("torch") and a.name.split(".")[0] not in ("numpy", "jax")
            elif isinstance(stmt, ast.ImportFrom) and stmt.module:
                for a in stmt.names:
                    if (a.asname or a.name) == root.id:
                        return stmt.module.split(".")[0] in ("collections", "typing", "dataclasses", "enum",
                                                             "functools", "itertools", "pathlib")
    return False


_BUILTIN_CONTAINERS = frozenset({"dict", "list", "set", "tuple", "frozenset", "str", "object"})
