"""``inplace_false``: construct the module out of place (``nn.Dropout(p, inplace=True)`` ->
``inplace=False``). Same values, more memory: safe. Refused when the module's in-place
effect is what the code relies on (a call whose result is discarded).

A module switched to in place afterwards, by a loop over the model's modules guarded by an
``isinstance`` test (``if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout): m.inplace = True``),
is fixed there: the class of the module whose in-place write breaks the backward leaves the test."""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import find_call_at
from gradwarden.fixes._doc import CannotFix, TextEdit, dotted

# Position of `inplace` among the positional arguments of the torch.nn modules that have it.
_POSITION = {"ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Mish": 0, "Hardswish": 0, "Hardsigmoid": 0,
             "CELU": 1, "ELU": 1, "LeakyReLU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1,
             "AlphaDropout": 1, "FeatureAlphaDropout": 1, "Hardtanh": 2, "Threshold": 2, "RReLU": 2,
             "relu": 1, "relu6": 1, "elu": 2, "leaky_relu": 2, "dropout": 3, "hardtanh": 3, "selu": 1, "celu": 2,
             "silu": 1, "mish": 1, "threshold": 3, "rrelu": 4, "hardswish": 1, "hardsigmoid": 1}


@realiser("inplace_false")
def inplace_false(ctx: FixContext) -> List[TextEdit]:
    try:
        return _at_construction(ctx)
    except CannotFix:
        site = ctx.span_param("site")
        if site is None:
            raise
        return _at_switch(ctx, site)


def _at_switch(ctx: FixContext, site) -> List[TextEdit]:
    doc = ctx.doc
    cls = ctx.param("module")
    node = doc.find(site)
    stmt = doc.small_stmt_of(node) if node is not None else None
    if not cls or not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
        raise CannotFix("no `m.inplace = True` at the switch")
    target = stmt.targets[0].target
    if not (isinstance(target, cst.Attribute) and target.attr.value == "inplace" and
            isinstance(stmt.value, cst.Name) and stmt.value.value == "True"):
        raise CannotFix("not `m.inplace = True`")
    obj = dotted(target.value)
    guard = next((a for a in doc.ancestors(stmt) if isinstance(a, cst.If)), None)
    if obj is None or guard is None:
        raise CannotFix("the switch is not guarded by a test")
    tests = _or_terms(guard.test)
    hits = [t for t in tests if _isinstance_of(t, obj, cls)]
    if len(hits) != 1 or len(tests) < 2:
        raise CannotFix("the test does not list the class beside others")
    i = tests.index(hits[0])
    # drop the term with the `or` that joins it to its neighbour
    if i > 0:
        _, prev_end = doc.full_offsets(tests[i - 1])
        _, end = doc.full_offsets(hits[0])
        return [TextEdit(prev_end, end, "")]
    start, _ = doc.full_offsets(hits[0])
    nxt, _ = doc.full_offsets(tests[1])
    return [TextEdit(start, nxt, "")]


def _or_terms(test: cst.BaseExpression) -> List[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or) and not test.lpar:
        return _or_terms(test.left) + _or_terms(test.right)
    return [test]


def _isinstance_of(test: cst.BaseExpression, obj: str, cls: str) -> bool:
    if not (isinstance(test, cst.Call) and dotted(test.func) == "isinstance" and len(test.args) == 2):
        return False
    return dotted(test.args[0].value) == obj and (dotted(test.args[1].value) or "").split(".")[-1] == cls


def _at_construction(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    call = find_call_at(doc, ctx.target)
    if call is None:
        raise CannotFix("no module construction at the target")
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "inplace":
            if isinstance(a.value, cst.Name) and a.value.value == "False":
                raise CannotFix("already out of place")
            _check_results_used(ctx, call)
            s, e = doc.full_offsets(a.value)
            return [TextEdit(s, e, "False")]
    short = (dotted(call.func) or "").split(".")[-1]
    at = _POSITION.get(short)
    pos = [a for a in call.args if a.keyword is None and not a.star]
    if at is not None and len(pos) > at and not any(a.star for a in call.args):
        v = pos[at].value
        if isinstance(v, cst.Name) and v.value == "True":
            _check_results_used(ctx, call)
            s, e = doc.full_offsets(v)
            return [TextEdit(s, e, "False")]
    raise CannotFix("no inplace=True argument here")


def _check_results_used(ctx: FixContext, ctor: cst.Call) -> None:
    """`self.act = nn.ReLU(inplace=True)` ... `self.act(x)` as a bare statement relies on the
    in-place effect."""
    doc = ctx.doc
    stmt = doc.small_stmt_of(ctor)
    if not isinstance(stmt, cst.Assign) or len(stmt.targets) != 1:
        return
    name = dotted(stmt.targets[0].target)
    if name is None:
        return
    for node in doc.walk():
        if isinstance(node, cst.Expr) and isinstance(node.value, cst.Call) and dotted(node.value.func) == name:
            raise CannotFix(f"`{name}(...)` is called for its in-place effect")
