"""Fixes of custom ``autograd.Function`` definitions.

- ``complete_grads`` (GW307): ``backward`` returns fewer gradients than ``forward`` has inputs:
  return ``None`` for the missing ones (``return g * ctx.k`` -> ``return g * ctx.k, None``);
- ``none_gradient`` (GW309): a gradient returned for a non-tensor forward input becomes ``None``
  (autograd would raise; that input has no gradient);
- ``static_function`` (GW308): a legacy Function (non-static ``forward``): make ``forward`` and
  ``backward`` static methods taking ``ctx`` (``self`` renamed in their bodies) and call it
  with ``Fn.apply(...)`` (``Fn()(x)`` call sites). Refused when the Function keeps state in
  ``__init__`` or is instantiated anywhere else than in a direct call.
"""
from __future__ import annotations

from typing import List, Optional

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._doc import CannotFix, Doc, TextEdit, dotted, npar


@realiser("complete_grads")
def complete_grads(ctx: FixContext) -> List[TextEdit]:
    """Only where the syntax fixes how many values the ``return`` gives (a tuple literal, or one
    expression that is certainly a single tensor: arithmetic on, a method of or an index into
    one of ``backward``'s gradient parameters): ``Cls._helper(...)``, ``(None,) * 3 +
    Fn.apply(...)`` or ``(None,) * 12`` may already be complete tuples, and the analysis's own
    count must agree with the syntax's."""
    doc = ctx.doc
    try:
        got, want = int(ctx.param("got")), int(ctx.param("want"))
    except ValueError:
        raise CannotFix("unknown gradient counts") from None
    if want <= got:
        raise CannotFix("nothing missing")
    node = doc.find(ctx.target)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if not isinstance(stmt, cst.Return) or stmt.value is None:
        raise CannotFix("not a return statement")
    fn = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.FunctionDef)), None)
    if fn is None or fn.name.value != "backward":
        raise CannotFix("not in a backward")
    value = stmt.value
    if returned_count(fn, value) != got:
        raise CannotFix("the syntax does not fix the number of gradients returned")
    extra = ", None" * (want - got)
    if isinstance(value, cst.Tuple):
        last = value.elements[-1]
        _, e = doc.full_offsets(last.value)
        return [TextEdit(e, e, extra)]
    s, e = doc.full_offsets(value)
    if isinstance(value, (cst.Lambda, cst.IfExp, cst.NamedExpr, cst.Yield)) and not npar(value):
        return [TextEdit(s, s, "("), TextEdit(e, e, ")" + extra)]
    return [TextEdit(e, e, extra)]


# Tensor methods and torch functions whose result is a tuple (or a list, or a named tuple), at
# least for some arguments (``x.max(dim)``): a call of one of these is never counted as one value.
_TUPLE_RESULTS = frozenset({
    "chunk", "split", "tensor_split", "split_with_sizes", "unbind", "hsplit", "vsplit", "dsplit", "sort", "topk",
    "max", "min", "median", "nanmedian", "mode", "kthvalue", "aminmax", "cummax", "cummin", "unique",
    "unique_consecutive", "tolist", "size", "shape", "var_mean", "std_mean", "lu", "qr", "svd", "eig", "eigh",
    "slogdet", "frexp", "nonzero", "where", "broadcast_tensors", "meshgrid", "histogram", "lstsq", "triangular_solve",
    "apply", "grad", "autograd",
})


def returned_count(fn: cst.FunctionDef, value: cst.BaseExpression) -> Optional[int]:
    """How many values ``return value`` gives in ``fn`` (a ``backward``), when the syntax says:
    a tuple literal without ``*``, or a single tensor; None when it cannot be told."""
    if isinstance(value, cst.Tuple):
        if any(isinstance(e, cst.StarredElement) for e in value.elements):
            return None
        return len(value.elements)
    grads = {p.name.value for p in fn.params.params[1:]}
    return 1 if _one_tensor(value, grads, _simple_bindings(fn), 0) else None


def _simple_bindings(fn: cst.FunctionDef) -> dict:
    """Names bound exactly once in ``fn``'s body, by a plain ``name = value`` (not in a nested
    function): name -> value; names bound more often (or otherwise) map to None."""
    out: dict = {}

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
            return node is fn

        def visit_Lambda(self, node: cst.Lambda) -> Optional[bool]:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            for t in node.targets:
                single = isinstance(t.target, cst.Name) and len(node.targets) == 1
                for n in _bound_names(t.target):
                    out[n] = node.value if single and n not in out else None

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            for n in _bound_names(node.target):
                out[n] = None

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            for n in _bound_names(node.target):
                out[n] = None

        def visit_For(self, node: cst.For) -> None:
            for n in _bound_names(node.target):
                out[n] = None

        def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
            for n in _bound_names(node.target):
                out[n] = None

        def visit_AsName(self, node: cst.AsName) -> None:
            for n in _bound_names(node.name):
                out[n] = None

    fn.visit(V())
    return out


def _bound_names(target: cst.CSTNode) -> List[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


def _one_tensor(e: cst.BaseExpression, grads: set, binds: dict, depth: int) -> bool:
    """Is ``e`` certainly one tensor? A gradient parameter of ``backward`` (a tensor, or None),
    a name bound once to such a value, arithmetic with one as an operand (and no tuple or list
    literal), a method of one or an index into one, a ``torch.`` function of one that never
    returns a tuple."""
    if depth > 8:
        return False
    if isinstance(e, cst.Name):
        if e.value in grads:
            return e.value not in binds  # a parameter rebound in the body may hold anything
        bound = binds.get(e.value)
        return bound is not None and _one_tensor(bound, grads, binds, depth + 1)
    if isinstance(e, cst.BinaryOperation):
        if isinstance(e.left, (cst.Tuple, cst.List)) or isinstance(e.right, (cst.Tuple, cst.List)):
            return False
        return _one_tensor(e.left, grads, binds, depth + 1) or _one_tensor(e.right, grads, binds, depth + 1)
    if isinstance(e, cst.UnaryOperation) and not isinstance(e.operator, cst.Not):
        return _one_tensor(e.expression, grads, binds, depth + 1)
    if isinstance(e, cst.IfExp):
        return _one_tensor(e.body, grads, binds, depth + 1) and _one_tensor(e.orelse, grads, binds, depth + 1)
    if isinstance(e, cst.Subscript):
        return _one_tensor(e.value, grads, binds, depth + 1)
    if isinstance(e, cst.Call) and isinstance(e.func, cst.Attribute):
        name = e.func.attr.value
        if name in _TUPLE_RESULTS and not (name == "where" and len(e.args) == 3):  # where(c): a tuple
            return False
        if _one_tensor(e.func.value, grads, binds, depth + 1):
            return True
        if dotted(e.func) == f"torch.{name}":
            return any(a.keyword is None and not a.star and _one_tensor(a.value, grads, binds, depth + 1)
                       for a in e.args)
    return False


@realiser("none_gradient")
def none_gradient(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    if not isinstance(node, cst.BaseExpression):
        raise CannotFix("no expression at the target")
    parent = doc.parent(node)
    if isinstance(parent, cst.Element):
        parent = doc.parent(parent)
    if not isinstance(parent, (cst.Tuple, cst.Return)):
        raise CannotFix("not an element of the returned gradients")
    s, e = doc.full_offsets(node)
    return [TextEdit(s, e, "None")]


@realiser("static_function")
def static_function(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    node = doc.find(ctx.target)
    if node is None:
        raise CannotFix("nothing at the target")
    cls = node if isinstance(node, cst.ClassDef) else next(
        (a for a in doc.ancestors(node) if isinstance(a, cst.ClassDef)), None)
    if cls is None or not isinstance(cls.body, cst.IndentedBlock):
        raise CannotFix("no class")
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    if "__init__" in methods:
        raise CannotFix("the Function keeps state in __init__")
    edits: List[TextEdit] = []
    for name in ("forward", "backward"):
        fn = methods.get(name)
        if fn is None:
            continue
        edits += _make_static(doc, fn)
    if not edits:
        raise CannotFix("already static")
    edits += _call_sites(doc, cls.name.value)
    return edits


def _is_static(fn: cst.FunctionDef) -> bool:
    return any(dotted(d.decorator) in ("staticmethod", "builtins.staticmethod") for d in fn.decorators)


def _make_static(doc: Doc, fn: cst.FunctionDef) -> List[TextEdit]:
    if _is_static(fn):
        return []
    if any(dotted(d.decorator) == "classmethod" for d in fn.decorators):
        raise CannotFix("a classmethod")
    params = fn.params.params
    if not params:
        raise CannotFix("no parameters")
    first = params[0].name.value
    row = doc.first_row(fn.decorators[0] if fn.decorators else fn)
    indent = doc.indent_of_row(row)
    at = doc.row_start(row)
    edits = [TextEdit(at, at, f"{indent}@staticmethod{doc.newline}")]
    if first != "ctx":
        if _binds(fn, "ctx"):
            raise CannotFix("`ctx` is already used")
        for n in _names(fn, first):
            s, e = doc.offsets(n)
            edits.append(TextEdit(s, e, "ctx"))
    return edits


def _names(fn: cst.FunctionDef, name: str) -> List[cst.Name]:
    """``name`` as a variable in ``fn`` (its parameter and its uses; not attributes, not in
    nested functions or classes)."""
    out: List[cst.Name] = [fn.params.params[0].name]

    class V(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
            return False

        def visit_ClassDef(self, node: cst.ClassDef) -> Optional[bool]:
            return False

        def visit_Lambda(self, node: cst.Lambda) -> Optional[bool]:
            return False

        def visit_Attribute(self, node: cst.Attribute) -> Optional[bool]:
            node.value.visit(self)
            return False

        def visit_Arg(self, node: cst.Arg) -> Optional[bool]:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> Optional[bool]:
            if node.value == name:
                out.append(node)
            return False

    fn.body.visit(V())
    return out


def _binds(fn: cst.FunctionDef, name: str) -> bool:
    return any(p.name.value == name for p in fn.params.params) or bool(
        [n for n in _names(fn, name)[1:]])


def _call_sites(doc: Doc, cls_name: str) -> List[TextEdit]:
    """``Fn()(args)`` -> ``Fn.apply(args)``; any other use of ``Fn()`` is refused."""
    edits: List[TextEdit] = []
    for node in doc.walk():
        if isinstance(node, cst.Call) and dotted(node.func) == cls_name:
            parent = doc.parent(node)
            if isinstance(parent, cst.Call) and parent.func is node and not node.args:
                s, _ = doc.offsets(node)
                _, e = doc.offsets(node)
                edits.append(TextEdit(s, e, f"{cls_name}.apply"))
            else:
                raise CannotFix(f"`{cls_name}(...)` is instantiated")
    return edits
