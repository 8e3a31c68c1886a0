"""``inplace_to_outofplace``: ``x.add_(y)`` -> ``x = x.add(y)``; ``F.relu(x, inplace=True)`` ->
``x = F.relu(x)``; ``torch.add(a, b, out=x)`` -> ``x = torch.add(a, b)``.

When the in-place call's result is used inside a larger expression (``z = h.add_(1) * 2``)
only the method changes (``h.add(1)``). Refused, like ``augassign_to_binop``, when another
alias of the written tensor (or, for a nested call, the tensor itself) is read afterwards."""
from __future__ import annotations

from typing import List

import libcst as cst

from gradwarden.fixes.registry import FixContext, realiser
from gradwarden.fixes._common import assignable, find_write
from gradwarden.fixes._doc import CannotFix, TextEdit
from gradwarden.fixes._flow import scope_index
from gradwarden.fixes.augassign import check_no_alias_read

# In-place methods whose out-of-place twin (name without the trailing `_`) exists on Tensor
# with the same arguments and the same result.
TWINS = {
    "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "arccos",
    "arcsin", "arctan", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm", "bitwise_and", "bitwise_not",
    "bitwise_or", "bitwise_xor", "ceil", "clamp", "clamp_max", "clamp_min", "clip", "copysign", "cos", "cosh",
    "cumprod", "cumsum", "deg2rad", "digamma", "div", "divide", "elu", "eq", "erf", "erfc", "erfinv", "exp",
    "exp2", "expm1", "fix", "float_power", "floor", "floor_divide", "fmod", "frac", "ge", "gt", "hardtanh",
    "heaviside", "hypot", "i0", "index_add", "index_copy", "index_fill", "index_put", "le", "leaky_relu", "lerp",
    "lgamma", "log", "log10", "log1p", "log2", "logical_and", "logical_not", "logical_or", "logical_xor", "logit",
    "lt", "masked_fill", "masked_scatter", "mul", "multiply", "mvlgamma", "nan_to_num", "ne", "neg", "negative",
    "nextafter", "polygamma", "pow", "rad2deg", "reciprocal", "relu", "remainder", "renorm", "round", "rsqrt",
    "scatter", "scatter_add", "scatter_reduce", "selu", "sgn", "sigmoid", "sign", "silu", "sin", "sinc", "sinh",
    "sqrt", "square", "squeeze", "sub", "subtract", "t", "tan", "tanh", "transpose", "tril", "triu", "true_divide",
    "trunc", "unsqueeze", "xlogy", "celu", "gelu", "mish", "hardsigmoid", "hardswish", "rrelu", "threshold",
    "softplus", "put", "index_reduce",
}


def remove_arg(doc, call: cst.Call, arg: cst.Arg) -> TextEdit:
    """The edit deleting one argument of a call, with its comma."""
    i = call.args.index(arg)
    _, end = doc.full_offsets(arg.value)
    if i > 0:
        _, prev_end = doc.full_offsets(call.args[i - 1].value)
        return TextEdit(prev_end, end, "")
    if len(call.args) > 1:
        start = doc.offsets(arg)[0]
        nxt = doc.offsets(call.args[1])[0]
        return TextEdit(start, nxt, "")
    raise CannotFix("the only argument")


@realiser("inplace_to_outofplace")
def inplace_to_outofplace(ctx: FixContext) -> List[TextEdit]:
    doc = ctx.doc
    w = find_write(doc, ctx.target)
    call = w.call
    if call is None:
        raise CannotFix("not a call")
    name = assignable(doc, w.name)
    stmt = w.stmt
    whole = isinstance(stmt, cst.Expr) and stmt.value is call
    out_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "out"), None)
    inplace_arg = next((a for a in call.args if a.keyword is not None and a.keyword.value == "inplace"), None)
    edits: List[TextEdit] = []
    if out_arg is not None:
        if not whole:
            raise CannotFix("out= call inside an expression")
        edits.append(remove_arg(doc, call, out_arg))
    elif inplace_arg is not None:
        if not (isinstance(inplace_arg.value, cst.Name) and inplace_arg.value.value == "True"):
            raise CannotFix("inplace is not literally True")
        edits.append(remove_arg(doc, call, inplace_arg))  # out of place is the default
    else:
        func = call.func
        if not isinstance(func, cst.Attribute) or not func.attr.value.endswith("_") or func.attr.value.endswith("__"):
            raise CannotFix("not an in-place method")
        twin = func.attr.value[:-1]
        if twin not in TWINS:
            raise CannotFix(f"no out-of-place twin for {func.attr.value}")
        _, ae = doc.offsets(func.attr)
        edits.append(TextEdit(ae - 1, ae, ""))
    if whole:
        check_no_alias_read(doc, stmt, name)
        s, _ = doc.offsets(stmt)
        edits.append(TextEdit(s, s, f"{name} = "))
    else:
        idx = scope_index(doc, doc.scope_of(stmt))
        if idx.read_after(name, stmt) or any(ev.name == name and ev.kind in ("read", "aug", "mutate")
                                             and ev.stmt is stmt and not doc.contains(call, ev.node)
                                             for ev in idx.events):
            raise CannotFix(f"`{name}` is read after the in-place call")
        check_no_alias_read(doc, stmt, name)
    return edits
