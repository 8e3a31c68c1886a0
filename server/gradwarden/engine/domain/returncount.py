"""How many values a ``return`` of a custom ``autograd.Function.backward`` returns, read from
the code: tuple literals, tuple arithmetic and calls that return tuples (GW307, GW709).

``backward`` must return one gradient per input of ``forward``. Libraries build that tuple in
many ways besides a literal: ``(None,) * 12``, ``(None, None, None) + (Fn.apply(...),)``,
``(None,) * 3 + Fn.apply(...)`` (``apply`` returns what ``forward`` returns: a tuple when it
returns several tensors), or ``return Cls._helper(...)`` (a staticmethod that returns a tuple).
Each of those is a sequence whose length is known from the code; anything whose length the
code does not tell is unknown (``None``), and no finding is made from an unknown length.

Pure functions over ``ast``: no interpreter state. Calls are followed into the functions and
classes defined at the top level of the module (and into the Function's own methods), a few
levels deep.
"""
from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Union

from gradwarden.engine.front.body import own_nodes

# One value that is not a sequence (a tensor, a number, None).
ONE = "one"
# What ``length`` answers: ONE, the length of a sequence (int), or None (not known).
Length = Union[str, int, None]

# Tensor methods and torch functions that return tuples (or lists) of tensors.
TUPLE_RETURNING = frozenset({
    "split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split",
    "unsafe_chunk", "max", "min", "sort", "topk", "kthvalue", "mode", "median", "nanmedian", "aminmax", "frexp",
    "qr", "svd", "slogdet", "eig", "eigh", "lu", "lu_unpack", "histogram", "unique", "unique_consecutive",
    "std_mean", "var_mean", "cummax", "cummin", "lstsq", "geqrf", "triangular_solve", "broadcast_tensors",
    "meshgrid", "tolist", "items", "values", "keys", "saved_tensors", "lobpcg", "where", "nonzero",
})
_MAX_DEPTH = 4


class ReturnCounter:
    """Lengths of return values in one module; ``own`` is the Function class's own methods."""

    def __init__(self, module: ast.Module, own_name: str = "", own: Optional[Dict[str, ast.AST]] = None) -> None:
        self.defs: Dict[str, ast.AST] = {}
        self.imports: Dict[str, str] = {}  # name bound by an import -> the module it names
        for stmt in module.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.defs[stmt.name] = stmt
            elif isinstance(stmt, ast.Import):
                for a in stmt.names:
                    self.imports[(a.asname or a.name).split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
            elif isinstance(stmt, ast.ImportFrom):
                for a in stmt.names:
                    self.imports[a.asname or a.name] = f"{stmt.module or ''}.{a.name}"
        self.own_name = own_name
        self.own = dict(own or {})
        self._visiting: Set[int] = set()

    # ------------------------------------------------------------------ public
    def count(self, expr: ast.expr, tensors: Sequence[str] = (), within: Optional[ast.AST] = None) -> Optional[int]:
        """How many values ``return expr`` returns (1 for a single value), or None. ``within``:
        the function holding the return, whose single assignments name what a returned name
        holds (``output = grad_output.neg() * ctx.alpha; return output``)."""
        self._assigned = _single_assignments(within) if within is not None else {}
        n = self.length(expr, set(tensors), 0)
        return 1 if n == ONE else n if isinstance(n, int) else None

    # ------------------------------------------------------------------ lengths
    def length(self, e: ast.expr, tensors: Set[str], depth: int) -> Length:
        if isinstance(e, (ast.Tuple, ast.List)):
            total = 0
            for x in e.elts:
                if isinstance(x, ast.Starred):
                    n = self.length(x.value, tensors, depth)
                    if not isinstance(n, int) or n == ONE:
                        return None
                    total += n
                else:
                    total += 1
            return total
        if isinstance(e, ast.BinOp):
            return self._binop(e, tensors, depth)
        if isinstance(e, (ast.UnaryOp, ast.Compare, ast.JoinedStr)):
            return ONE
        if isinstance(e, ast.Constant):
            return len(e.value) if isinstance(e.value, tuple) else ONE
        if isinstance(e, ast.Subscript):
            # grads[0]: one value; grads[1:]: a part of a sequence of unknown length
            return None if isinstance(e.slice, ast.Slice) else ONE
        if isinstance(e, ast.IfExp):
            a, b = self.length(e.body, tensors, depth), self.length(e.orelse, tensors, depth)
            return a if a == b else None
        if isinstance(e, ast.Name):
            if e.id in tensors:
                return ONE
            value = getattr(self, "_assigned", {}).get(e.id)
            return self.length(value, tensors, depth + 1) if value is not None and depth < _MAX_DEPTH else None
        if isinstance(e, ast.Call):
            return self._call(e, tensors, depth)
        return None

    def _binop(self, e: ast.BinOp, tensors: Set[str], depth: int) -> Length:
        if not isinstance(e.op, (ast.Add, ast.Mult)):
            return ONE  # -, /, @, ** ... never make a sequence
        a, b = self.length(e.left, tensors, depth), self.length(e.right, tensors, depth)
        if isinstance(e.op, ast.Add):
            if isinstance(a, int) and isinstance(b, int):
                return a + b  # tuple concatenation
            if a == ONE and b == ONE:
                return ONE
            if a == ONE or b == ONE:
                # a tensor on either side: tensor arithmetic (a tuple on the other side is
                # converted), unless the "one" side is a plain number and the other a tuple
                return ONE if _tensor_like(e.left if a == ONE else e.right, tensors) else None
            return None
        # repetition: (None,) * 12, 2 * (None,)
        for seq, other in ((a, e.right), (b, e.left)):
            if isinstance(seq, int):
                if isinstance(other, ast.Constant) and isinstance(other.value, int) and not isinstance(other.value, bool):
                    return seq * other.value
                return None
        if a == ONE and _tensor_like(e.left, tensors) or b == ONE and _tensor_like(e.right, tensors):
            return ONE  # a tensor times anything is a tensor
        return None

    def _call(self, e: ast.Call, tensors: Set[str], depth: int) -> Length:
        f = e.func
        if isinstance(f, ast.Name):
            target = self.own.get(f.id) if f.id in self.own and f.id not in self.defs else self.defs.get(f.id)
            if isinstance(target, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return self.returns_of(target, depth)
            return None
        if not isinstance(f, ast.Attribute):
            return None
        recv = f.value
        if isinstance(recv, ast.Name):
            cls = self._class_named(recv.id)
            if cls is not None:
                # Fn.apply(...) returns what Fn.forward returns; Cls.helper(...) what it returns
                if f.attr == "apply":
                    fwd = cls.get("forward")
                    return self.returns_of(fwd, depth) if fwd is not None else None
                meth = cls.get(f.attr)
                return self.returns_of(meth, depth) if meth is not None else None
            if recv.id in self.defs:
                return None  # an attribute of a function of this module: not followed
        root = recv
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        mod = self.imports.get(root.id) if isinstance(root, ast.Name) else None
        if mod is not None and not (mod == "torch" or mod.startswith("torch.")):
            return None  # a function of another library: what it returns is not known here
        # a torch function or a tensor method: one tensor, unless it is one that returns several
        return None if f.attr in TUPLE_RETURNING else ONE

    def _class_named(self, name: str) -> Optional[Dict[str, ast.AST]]:
        if name == self.own_name:
            return self.own
        node = self.defs.get(name)
        if isinstance(node, ast.ClassDef):
            return {s.name: s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
        return None

    def returns_of(self, fdef: Optional[ast.AST], depth: int) -> Length:
        """The length every ``return`` of ``fdef`` agrees on (ONE without a value), or None."""
        if fdef is None or depth >= _MAX_DEPTH or id(fdef) in self._visiting:
            return None
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(fdef)):
            return None
        self._visiting.add(id(fdef))
        try:
            found: List[Length] = []
            for n in own_nodes(fdef):
                if isinstance(n, ast.Return):
                    found.append(ONE if n.value is None else self.length(n.value, set(), depth + 1))
            if not found:
                return ONE
            first = found[0]
            return first if first is not None and all(x == first for x in found) else None
        finally:
            self._visiting.discard(id(fdef))


def _single_assignments(fdef: ast.AST) -> Dict[str, ast.expr]:
    """The names ``fdef``'s own code binds exactly once, by a plain ``name = value`` (never in a
    loop target, an augmented assignment, a ``with``/``except`` alias or a nested scope), with
    that value."""
    seen: Dict[str, List[ast.expr]] = {}
    other: Set[str] = set()
    for n in own_nodes(fdef):
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            seen.setdefault(n.targets[0].id, []).append(n.value)
            continue
        if isinstance(n, ast.Assign):
            targets = n.targets
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)):
            targets = [n.target]
        elif isinstance(n, (ast.For, ast.AsyncFor)):
            targets = [n.target]
        elif isinstance(n, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in n.items if i.optional_vars is not None]
        elif isinstance(n, ast.NamedExpr):
            targets = [n.target]
        else:
            continue
        for t in targets:
            other.update(x.id for x in ast.walk(t) if isinstance(x, ast.Name))
    return {k: v[0] for k, v in seen.items() if len(v) == 1 and k not in other}


def _tensor_like(e: ast.expr, tensors: Set[str]) -> bool:
    """Certainly not a plain Python number: a tensor parameter, or a method call's result."""
    if isinstance(e, ast.Name):
        return e.id in tensors
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        return True
    if isinstance(e, ast.BinOp):
        return _tensor_like(e.left, tensors) or _tensor_like(e.right, tensors)
    return isinstance(e, (ast.Subscript, ast.UnaryOp)) and _tensor_like(getattr(e, "value", getattr(e, "operand", e)),
                                                                        tensors)


def tuple_elements(e: ast.expr) -> List[ast.expr]:
    """The elements of a returned tuple built by literals and tuple arithmetic: ``(a, b)``,
    ``(None,) * 3 + (x,)``; a part that is not a literal stays one element (its own check)."""
    if isinstance(e, ast.Tuple):
        return list(e.elts)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add) and (_is_tuple_expr(e.left) or _is_tuple_expr(e.right)):
        return tuple_elements(e.left) + tuple_elements(e.right)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        for seq, k in ((e.left, e.right), (e.right, e.left)):
            if _is_tuple_expr(seq) and isinstance(k, ast.Constant) and isinstance(k.value, int):
                return tuple_elements(seq)
    return [e]


def _is_tuple_expr(e: ast.expr) -> bool:
    if isinstance(e, ast.Tuple):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Mult)):
        return _is_tuple_expr(e.left) or _is_tuple_expr(e.right)
    return False
