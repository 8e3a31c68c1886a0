"""Can an ``__init__`` that only configures in-place modules build a container?

An ``__init__`` whose only triggers are ``inplace=True`` keywords is analysed for one reason:
the ``nn.Sequential`` containers it builds are run on a tensor that requires grad
(``Interpreter.probe_sequentials``), because an in-place chain inside a container breaks
where no ``forward`` of the file shows it. Building the instance costs as much as analysing
a method; when the ``__init__`` provably builds no container, there is nothing to probe and
nothing to build.

Provably none, from the code alone (anything else: build it, as before):

- every name it reads is a parameter or a local of it, ``self``/``super``, a builtin of
  ``_PLAIN_BUILTINS``, or a module-level name bound to a torch API (an object of the module,
  even a container made at module level, could be stored on ``self``);
- every call in it is a torch API (``nn.Linear(...)``, ``nn.init.zeros_(...)``) whose name is
  not a container's, one of those builtins, or ``super().__init__(...)`` of a class whose bases
  are all such torch APIs.
"""
from __future__ import annotations

import ast
from typing import Callable, List, Optional, Set

from gradwarden.engine.domain.torchsem import CONTAINERS

CONTAINER_NAMES = frozenset(path.rsplit(".", 1)[-1] for path in CONTAINERS)  # Sequential, ModuleList, ...
# builtins that cannot hand back an object of the module (no globals(), vars(), getattr(), eval())
_PLAIN_BUILTINS = frozenset({"range", "len", "int", "float", "bool", "str", "tuple", "list", "dict", "set", "min",
                             "max", "abs", "round", "sum", "isinstance", "print", "enumerate", "zip", "reversed",
                             "sorted", "True", "False", "None"})

TorchPath = Callable[[str], Optional[str]]  # a module-level name -> its torch path (None: not a torch API)


_NESTED = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Global, ast.Nonlocal, ast.Await,
           ast.Yield, ast.YieldFrom)
# fields an __init__ does not run: annotations (never evaluated under ``from __future__ import
# annotations``, and they build nothing otherwise)
_NOT_RUN = frozenset({"annotation", "returns", "type_comment", "decorator_list"})


def builds_no_container(fn: ast.FunctionDef, cls: ast.ClassDef, torch_path: TorchPath) -> bool:
    """True when ``fn`` (the ``__init__`` of ``cls``) cannot build a container;
    ``torch_path(name)``: the torch API a module-level name is bound to, if it is one.

    One walk, stopping at the first call that is not plain (most ``__init__``s that call a
    helper or a layer passed in stop early); the names a call starts from must then not be
    locals of ``fn`` (a parameter or a variable named like a torch module or a builtin)."""
    local: Set[str] = {"self", "super", cls.name}  # the class's own name: ``super(A, self)``
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            local.add(a.arg)
    loads: List[str] = []
    roots: Set[str] = set()  # the names the calls start from
    stack: List[ast.AST] = [args, *fn.body]
    while stack:  # the nodes that run (by hand: ast.walk costs several times as much)
        node = stack.pop()
        kind = node.__class__
        if kind is ast.Name:
            if node.ctx.__class__ is ast.Load:  # type: ignore[attr-defined]
                loads.append(node.id)  # type: ignore[attr-defined]
            else:
                local.add(node.id)  # type: ignore[attr-defined]
            continue
        if kind is ast.Call:
            root = _plain_call(node, cls.bases, torch_path)  # type: ignore[arg-type]
            if root is None:
                return False
            roots.add(root)
        elif isinstance(node, _NESTED):
            return False  # nested code and scopes: not worth following here
        for name in node._fields:
            if name in _NOT_RUN:
                continue
            value = getattr(node, name, None)
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        stack.append(item)
            elif isinstance(value, ast.AST):
                stack.append(value)
    if not roots.isdisjoint(local - {"super"}):
        return False  # a call through a local named like a torch module or a builtin
    return all(name in local or name in _PLAIN_BUILTINS or torch_path(name) is not None for name in loads)


def _plain_call(call: ast.Call, bases: list, torch_path: TorchPath) -> Optional[str]:
    """The name a plain call starts from (``nn`` of ``nn.Linear(...)``), None if not plain."""
    func = call.func
    if isinstance(func, ast.Name) and (func.id in _PLAIN_BUILTINS or func.id == "super"):
        return func.id  # super() itself: what is called on it is checked as its own call
    if isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and \
            isinstance(func.value.func, ast.Name) and func.value.func.id == "super":
        return "super" if all(_not_container(_dotted(b, torch_path)) for b in bases) else None
    root = func
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name) and _not_container(_dotted(func, torch_path)):
        return root.id
    return None


def _dotted(node: ast.AST, torch_path: TorchPath) -> Optional[str]:
    """The torch path of ``nn.Linear`` (a module-level name and attributes), else None."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    root = torch_path(node.id)
    if root is None:
        return None
    return ".".join([root] + attrs[::-1])


def _not_container(path: Optional[str]) -> bool:
    return path is not None and path.rsplit(".", 1)[-1] not in CONTAINER_NAMES
