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
    value = stmt.value
    extra = ", None" * (want - got)
    if isinstance(value, cst.Tuple):
        if len(value.elements) != got:
            raise CannotFix("count mismatch")
        last = value.elements[-1]
        _, e = doc.full_offsets(last.value)
        return [TextEdit(e, e, extra)]
    if got != 1:
        raise CannotFix("the returned value is not a tuple literal")
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value not in (
            "float", "int"):
        raise CannotFix("a helper's result may already be a tuple")
    s, e = doc.full_offsets(value)
    if isinstance(value, (cst.Lambda, cst.IfExp, cst.NamedExpr, cst.Yield)) and not npar(value):
        return [TextEdit(s, s, "("), TextEdit(e, e, ")" + extra)]
    return [TextEdit(e, e, extra)]


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
