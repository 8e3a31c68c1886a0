"""Helpers shared by several fix kinds: the written tensor of an in-place write, its aliases,
"is this attribute a Parameter", optimizer -> model, backward roots."""
from __future__ import annotations

from typing import List, Optional, Set, Tuple

import libcst as cst

from gradwarden.fixes._doc import CannotFix, Doc, base_of, dotted
from gradwarden.fixes._flow import ScopeIndex, view_source

_BINOP = {
    cst.AddAssign: "+", cst.SubtractAssign: "-", cst.MultiplyAssign: "*", cst.DivideAssign: "/",
    cst.FloorDivideAssign: "//", cst.ModuloAssign: "%", cst.PowerAssign: "**", cst.MatrixMultiplyAssign: "@",
    cst.BitAndAssign: "&", cst.BitOrAssign: "|", cst.BitXorAssign: "^", cst.LeftShiftAssign: "<<",
    cst.RightShiftAssign: ">>",
}
# Binding strength of binary operators (higher binds tighter).
_LEVEL = {"|": 1, "^": 2, "&": 3, "<<": 4, ">>": 4, "+": 5, "-": 5, "*": 6, "/": 6, "//": 6, "%": 6, "@": 6,
          "**": 8}
_BINOP_NODE = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//", cst.Modulo: "%",
    cst.Power: "**", cst.MatrixMultiply: "@", cst.BitAnd: "&", cst.BitOr: "|", cst.BitXor: "^",
    cst.LeftShift: "<<", cst.RightShift: ">>",
}


def binop_text(node: cst.AugAssign) -> str:
    for cls, text in _BINOP.items():
        if isinstance(node.operator, cls):
            return text
    raise CannotFix("unknown augmented operator")


def needs_parens_as_right_operand(value: cst.CSTNode, op: str) -> bool:
    """Would ``x op value`` parse differently from ``x op (value)``?"""
    from gradwarden.fixes._doc import npar

    if npar(value):
        return False
    if isinstance(value, cst.UnaryOperation) and not isinstance(value.operator, cst.Not):
        return False  # x * -y, x ** -y
    if isinstance(value, cst.BinaryOperation):
        inner = next((t for c, t in _BINOP_NODE.items() if isinstance(value.operator, c)), None)
        if inner is None:
            return True
        return _LEVEL[inner] <= _LEVEL[op] or inner == "**" or op == "**"
    from gradwarden.fixes._doc import is_primary

    return not is_primary(value)


# --------------------------------------------------------------------------- writes
class Write:
    """An in-place write found at a diagnostic: its statement and the written expression."""

    def __init__(self, stmt: cst.BaseSmallStatement, target: cst.CSTNode, call: Optional[cst.Call] = None) -> None:
        self.stmt = stmt
        self.target = target  # the written tensor (subscripts stripped)
        self.call = call  # the in-place call, for method forms

    @property
    def name(self) -> Optional[str]:
        return dotted(self.target)


def find_write(doc: Doc, span, name_hint: str = "") -> Write:
    node = doc.find(span)
    if node is None:
        raise CannotFix("nothing at the span")
    stmt = doc.small_stmt_of(node)
    if stmt is None:
        raise CannotFix("not inside a simple statement")
    if isinstance(stmt, cst.AugAssign) and (node is stmt or doc.contains(stmt.target, node) or
                                            doc.offsets(node) == doc.offsets(stmt)):
        return Write(stmt, base_of(stmt.target))
    if isinstance(stmt, cst.Assign) and (node is stmt or doc.offsets(node) == doc.offsets(stmt)):
        for t in stmt.targets:
            if isinstance(t.target, cst.Subscript):
                return Write(stmt, base_of(t.target))
    call = node if isinstance(node, cst.Call) else doc.find(span, cst.Call)
    if isinstance(call, cst.Call) and doc.contains(stmt, call):
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "out":
                return Write(stmt, base_of(a.value), call)
        for a in call.args:
            if a.keyword is not None and a.keyword.value == "inplace":
                pos = [x for x in call.args if x.keyword is None and not x.star]
                if pos:
                    return Write(stmt, base_of(pos[0].value), call)
                named = [x for x in call.args if x.keyword is not None and x.keyword.value in ("input", "x", "self")]
                if named:
                    return Write(stmt, base_of(named[0].value), call)
                raise CannotFix("inplace call without input")
        if isinstance(call.func, cst.Attribute):
            return Write(stmt, base_of(call.func.value), call)
    if isinstance(stmt, cst.AugAssign):
        return Write(stmt, base_of(stmt.target))
    if isinstance(stmt, cst.Assign):
        for t in stmt.targets:
            if isinstance(t.target, cst.Subscript):
                return Write(stmt, base_of(t.target))
    raise CannotFix("cannot tell what is written")


def alias_set(idx: ScopeIndex, name: str, before: int) -> Tuple[List[Tuple[str, Optional[cst.CSTNode]]], Set[str]]:
    """(the view chain of ``name`` upwards, every name bound before ``before`` as a view of a
    member of that chain or of one another: siblings and descendants)."""
    chain = idx.alias_chain(name, before)
    members = {n for n, _ in chain}
    others: Set[str] = set()
    for _ in range(3):
        grew = False
        for ev in idx.events:
            if ev.kind != "bind" or ev.start >= before or ev.name in members or ev.name in others:
                continue
            b = idx.binding(ev)
            if b is None or b.value is None or b.kind not in ("assign", "ann"):
                continue
            src = view_source(b.value, tuple_index=b.index)
            if b.index is not None and any(st is b.stmt for _, st in chain) or \
                    b.index is not None and _unpacks_same(idx, b.stmt, name, before):
                continue  # another piece of the same split/chunk/unbind: disjoint memory
            if src is not None and (src in members or src in others):
                # only if this binding is still the current one at `before`
                cur = idx.binding_before(ev.name, before)
                if cur is not None and cur.node is ev.node:
                    others.add(ev.name)
                    grew = True
        if not grew:
            break
    return chain, others


def _unpacks_same(idx: ScopeIndex, stmt: cst.CSTNode, name: str, before: int) -> bool:
    ev = idx.binding_before(name, before)
    return ev is not None and ev.stmt is stmt


def is_parameter_attr(doc: Doc, name: str) -> bool:
    """Is ``name`` (``self.w``, ``model.fc.weight``) an nn.Parameter attribute (so that assigning
    a plain tensor to it would raise)?"""
    if "." not in name:
        return False
    attr = name.rsplit(".", 1)[1]
    if attr in ("weight", "bias") and not name.startswith("self."):
        return True  # module.weight / module.bias of a torch module
    for node in doc.walk():
        if isinstance(node, cst.Assign):
            for t in node.targets:
                if isinstance(t.target, cst.Attribute) and t.target.attr.value == attr and _is_param_ctor(node.value):
                    return True
        if isinstance(node, cst.AnnAssign) and isinstance(node.target, cst.Attribute) and \
                node.target.attr.value == attr and node.value is not None and _is_param_ctor(node.value):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "register_parameter" and node.args:
            v = node.args[0].value
            if isinstance(v, cst.SimpleString) and v.evaluated_value == attr:
                return True
    return False


def _is_param_ctor(value: cst.CSTNode) -> bool:
    if isinstance(value, cst.Call):
        name = dotted(value.func) or ""
        return name.split(".")[-1] in ("Parameter", "UninitializedParameter")
    return False


def assignable(doc: Doc, name: Optional[str]) -> str:
    if not name:
        raise CannotFix("the written tensor has no name")
    if name.endswith(".data") or ".data." in name:
        raise CannotFix("written through .data")
    if is_parameter_attr(doc, name):
        raise CannotFix(f"{name} is a Parameter")
    return name


# --------------------------------------------------------------------------- optimizers
def optimizer_model(doc: Doc, opt: str) -> Optional[str]:
    """``opt = torch.optim.Adam(D.parameters(), ...)`` -> ``D`` (also for ``self.x_optim``)."""
    attr = opt.split(".")[-1]
    for node in doc.walk():
        if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
            continue
        match = False
        for t in node.targets:
            tgt = t.target
            if isinstance(tgt, (cst.Tuple, cst.List)):
                continue
            d = dotted(tgt)
            if d == opt or (d is not None and d.split(".")[-1] == attr and "." in opt):
                match = True
        if not match or not node.value.args:
            continue
        first = node.value.args[0].value
        model = _params_source(first)
        if model is not None:
            return model
    return None


def _params_source(expr: cst.CSTNode) -> Optional[str]:
    """``D.parameters()`` / ``list(D.parameters())`` / ``D.named_parameters()`` -> ``D``."""
    if isinstance(expr, cst.Call):
        f = expr.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("parameters", "named_parameters"):
            return dotted(f.value)
        if isinstance(f, cst.Name) and f.value in ("list", "tuple") and expr.args:
            return _params_source(expr.args[0].value)
    return None


def backward_roots(doc: Doc, call: cst.Call) -> List[str]:
    """Names of the tensors a backward call starts from (``loss`` in ``loss.backward()``,
    ``(a + b).backward()`` -> a, b; ``torch.autograd.backward(x)`` -> x)."""
    from gradwarden.fixes._flow import operands

    f = call.func
    if isinstance(f, cst.Attribute) and f.attr.value == "backward" and dotted(f.value) not in ("torch.autograd",
                                                                                                 "autograd"):
        roots = [dotted(base_of(o)) for o in operands(doc, f.value)]
        return [r for r in roots if r]
    if call.args:
        roots = [dotted(base_of(o)) for o in operands(doc, call.args[0].value)]
        return [r for r in roots if r]
    return []


def find_call_at(doc: Doc, span) -> Optional[cst.Call]:
    node = doc.find(span, cst.Call)
    return node if isinstance(node, cst.Call) else None
