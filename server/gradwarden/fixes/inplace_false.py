"""``inplace_false``: construct the module out of place (``nn.Dropout(p, inplace=True)`` ->
``inplace=False``). Same values, more memory: safe. Refused when the module's in-place
effect is what the code relies on (a call whose result is discarded)."""
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
