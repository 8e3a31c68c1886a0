"""Branches whose gradient is non-finite where the forward does not use them (GW720).

``torch.where(guard, a, b)`` evaluates both branches on every element; backward sends a zero
gradient into the branch that was not selected, and multiplies it by that branch's derivative.
Where the guard exists to keep an op away from its singular point (``p > 0`` for ``p *
torch.log(p)``, ``n > 0`` for ``v / n``, ``x > 20`` for ``log1p(exp(x))``), the unselected
elements are exactly those at the singular point: the derivative there is infinite, ``0 x inf =
NaN``, and the NaN reaches every parameter upstream. Nothing raises.

The check reads the call's syntax: the guard compares an expression ``E`` with a constant, and
the branch the guard rejects applies to the same ``E`` an op that is singular on that side (at
or below the bound: ``log``, ``sqrt``, ``rsqrt``, ``reciprocal``, a division by ``E``, a negative
power; above it: ``exp``). A branch that applies the op to a guarded copy (``safe = torch.where(p
> 0, p, 1)``; ``v / n.clamp_min(eps)``) is another expression and is not reported. Reported only
when the rejected branch requires grad.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.checks.zerodiag import PairZeros
from gradwarden.engine.diagnostic import Related
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, State, TensorV, Value

# singular at or below the guard's bound (0 for log and division)
LOW_SINGULAR = frozenset({"log", "log2", "log10", "sqrt", "rsqrt", "reciprocal"})
# overflow above the guard's bound
HIGH_SINGULAR = frozenset({"exp", "expm1"})
# an infinite derivative at +-1 (and NaN beyond): singular where a guard `E < 1` (`E.abs() < 1`) rejects E
UNIT_SINGULAR = frozenset({"acos", "asin", "arccos", "arcsin", "atanh", "arctanh"})
_MODULES = ("torch", "math", "F", "torch.special", "special")


def _const(node: ast.expr) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) \
        or isinstance(node, (ast.Name, ast.Attribute))


def _guard(cond: ast.expr) -> Optional[Tuple[str, bool, bool]]:
    """``E > c`` -> (E's text, True: E is large where the guard holds, whether c is 0 or an epsilon);
    ``E == 0`` -> (E, False, True)."""
    if not isinstance(cond, ast.Compare) or len(cond.ops) != 1:
        return None
    left, op, right = cond.left, cond.ops[0], cond.comparators[0]
    flip = {ast.Gt: True, ast.GtE: True, ast.NotEq: True, ast.Lt: False, ast.LtE: False, ast.Eq: False}
    if type(op) not in flip:
        return None
    if _const(right):  # `E > 0`, `x > threshold` (the bound on the right, by convention)
        subject, gt = left, flip[type(op)]
    elif _const(left):  # `0 < E`
        subject, gt = right, flip[type(op)] if isinstance(op, (ast.NotEq, ast.Eq)) else not flip[type(op)]
    else:
        return None
    if isinstance(subject, ast.Constant):
        return None
    bound = right if subject is left else left
    return ast.unparse(subject), gt, _small_literal(bound)


def _small_literal(node: ast.expr) -> bool:
    """A bound at the singular point of log and division: 0, or an epsilon."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool) \
        and abs(node.value) <= 1e-3


def _unit_bound(cond: ast.expr) -> Optional[float]:
    """The guard's bound when it is the literal 1 or -1 (the singular points of ``acos``/``asin``)."""
    if not isinstance(cond, ast.Compare) or len(cond.ops) != 1:
        return None
    for side in (cond.comparators[0], cond.left):
        sign = 1.0
        if isinstance(side, ast.UnaryOp) and isinstance(side.op, ast.USub):
            side, sign = side.operand, -1.0
        if isinstance(side, ast.Constant) and isinstance(side.value, (int, float)) and not isinstance(side.value, bool) \
                and side.value == 1:
            return sign
    return None


def _abs_of(subject: str) -> Optional[str]:
    """``E.abs()`` / ``torch.abs(E)`` -> ``E``'s text."""
    try:
        node = ast.parse(subject, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "abs" and not node.args:
            return ast.unparse(f.value)
        if isinstance(f, ast.Attribute) and f.attr == "abs" and ast.unparse(f.value) in _MODULES and len(node.args) == 1:
            return ast.unparse(node.args[0])
    return None


def _unit_uses(branch: ast.expr, subject: str, bound: float, rejected_large: bool) -> List[Tuple[str, ast.AST]]:
    """``acos``/``asin`` of ``subject`` in a branch rejected at their singular point: ``E >= 1`` rejected
    (``E < 1``), ``E <= -1`` rejected (``E > -1``), ``|E| >= 1`` rejected (``E.abs() < 1``)."""
    inner = _abs_of(subject)
    if inner is not None:
        if bound != 1.0 or not rejected_large:
            return []
        subject = inner
    elif (bound == 1.0) != rejected_large:
        return []
    found: List[Tuple[str, ast.AST]] = []
    for n in ast.walk(branch):
        if isinstance(n, ast.Call) and _op_name(n) in UNIT_SINGULAR:
            f = n.func
            arg = f.value if isinstance(f, ast.Attribute) and ast.unparse(f.value) not in _MODULES else \
                (n.args[0] if n.args else None)
            if arg is not None and ast.unparse(arg) == subject:
                found.append((_op_name(n), n))
    return found


def _op_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _singular_uses(branch: ast.expr, subject: str, low: bool) -> List[Tuple[str, ast.AST]]:
    """Ops in ``branch`` singular (on the ``low`` or high side) applied to ``subject`` itself."""
    found: List[Tuple[str, ast.AST]] = []
    for n in ast.walk(branch):
        if isinstance(n, ast.Call):
            name = _op_name(n)
            ops = LOW_SINGULAR if low else HIGH_SINGULAR
            if name not in ops:
                continue
            f = n.func
            if isinstance(f, ast.Attribute) and ast.unparse(f.value) not in _MODULES:
                arg: Optional[ast.AST] = f.value  # `E.log()`
            else:
                arg = n.args[0] if n.args else None  # `torch.log(E)`
            if arg is not None and ast.unparse(arg) == subject:
                found.append((f"{name}", n))
        elif low and isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and ast.unparse(n.right) == subject:
            found.append(("division", n))
        elif low and isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow) and ast.unparse(n.left) == subject \
                and isinstance(n.right, ast.UnaryOp) and isinstance(n.right.op, ast.USub):
            found.append(("negative power", n))
    return found


def check_where(it: Any, st: State, node: ast.AST, args: List[Value]) -> None:
    """``torch.where(guard, a, b)``: the branch the guard rejects is singular there (GW720)."""
    if not isinstance(node, ast.Call) or len(node.args) != 3 or len(args) < 3:
        return
    g = _guard(node.args[0])
    if g is None:
        return
    subject, large_when_true, at_zero = g
    for k in (1, 2):
        branch, value = node.args[k], args[k]
        if not isinstance(value, TensorV):
            continue
        info = st.t.get(value.tid)
        if info is None or info.rg is not True:
            continue
        # branch k is rejected where the guard is (k == 1 ? False : True)
        rejected_large = (not large_when_true) if k == 1 else large_when_true
        unit = _unit_bound(node.args[0])
        uses = _unit_uses(branch, subject, unit, rejected_large) if unit is not None else []
        if not uses and not rejected_large and not at_zero:
            continue  # `log(x)` rejected where x <= y: not at log's singular point unless y is 0
        uses = uses or _singular_uses(branch, subject, low=not rejected_large)
        if not uses:
            continue
        op, where_op = uses[0]
        span = it.span_of(node)
        op_span = it.span_of(where_op)
        mask = ast.unparse(node.args[0])
        what = f"`{op}` of `{subject}`" if op not in ("division", "negative power") else \
            f"the {op} by `{subject}`" if op == "division" else f"a negative power of `{subject}`"
        it.emit(Event("nonfinite_branch", span, {
            "op": ast.unparse(where_op) if len(ast.unparse(where_op)) <= 40 else what, "line": op_span.row,
            "mask": mask, "target": "the gradient of everything upstream of it"},
            related=(Related(op_span, f"{what}: infinite derivative where `{mask}` rejects it", "note"),)
            if op_span.row != span.row else ()))
        return


# ops whose output is exactly 0 wherever their input is (sizes and layouts, reductions of zeros)
KEEP_ZERO = frozenset({"sum", "mean", "unsqueeze", "view", "reshape", "clone", "abs", "neg", "square", "flatten",
                       "squeeze", "expand", "expand_as", "contiguous", "transpose", "t", "permute", "Parameter",
                       "USub", "to", "float", "double"})
# singular at 0: an infinite derivative there
SINGULAR_AT_ZERO = frozenset({"sqrt", "rsqrt", "reciprocal", "log", "log2", "log10"})

_NEG_INF = re.compile(r"^-\s*(?:math\.|torch\.|np\.|numpy\.)?inf$|^float\(\s*['\"]-inf(?:inity)?['\"]\s*\)$|"
                      r"^-\s*float\(\s*['\"]inf(?:inity)?['\"]\s*\)$", re.I)


class ExactZeros:
    """Held by the ``flow`` role as ``flow.zeros``: tensors masked with ``-inf`` (``masked_fill(pad,
    float("-inf"))``) and the exact zeros ``softmax``/``exp`` make of them. ``log`` of those zeros
    is ``-inf`` with an infinite derivative: masked out afterwards (``-log(p)[valid]``), its zero
    incoming gradient becomes ``0 x inf = NaN`` (GW720, reported at the ``log``)."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.neginf: Dict[int, str] = {}  # tid -> the mask's text
        self.neginf_at: Dict[int, Any] = {}  # tid -> where its -inf entries were made (masked_fill, log_softmax)
        self.zeros: Dict[int, str] = {}
        # tid -> (where the zeros were made, (version, data writes) then): a tensor every element of
        # which is exactly 0 (`torch.zeros`, a parameter made of it, products, powers and sums of it),
        # as long as nothing wrote it since
        self.exact: Dict[int, Tuple[Any, Tuple[int, int]]] = {}
        self.pairs = PairZeros(it, self._stamp)  # the zero diagonal of a pairwise self-difference (checks/zerodiag.py)

    def _stamp(self, st: State, tid: int) -> Tuple[int, int]:
        info = st.t.get(tid)
        return (st.version(info.counter), len(st.data_writes.get(info.storage, ()))) if info is not None else (-1, -1)

    def _exact(self, st: State, v: Any) -> bool:
        return isinstance(v, TensorV) and v.tid in self.exact and self.exact[v.tid][1] == self._stamp(st, v.tid)

    def track(self, st: State, name: str, inputs: List[Any], out: Any, node: ast.AST) -> None:
        """Exact zeros through the ops that keep them; the square root (or log, reciprocal) of one
        that requires grad has an infinite derivative there: its gradient is inf, or 0 x inf = NaN
        where a `where`/mask drops it (GW720, reported at that op)."""
        if not isinstance(out, TensorV):
            return
        if name in ("zeros", "zeros_like", "new_zeros"):
            self.exact[out.tid] = (self.it.span_of(node), self._stamp(st, out.tid))
            return
        if not self.exact or not inputs:
            return
        src = inputs[0]
        origin = None
        if name in KEEP_ZERO and self._exact(st, src):
            origin = self.exact[src.tid][0]
        elif name in ("mul", "Mult", "matmul", "MatMult"):
            hit = next((x for x in inputs[:2] if self._exact(st, x)), None)
            origin = self.exact[hit.tid][0] if hit is not None else None
        elif name in ("pow", "Pow") and self._exact(st, src) and len(inputs) > 1 and isinstance(inputs[1], ConstV) \
                and isinstance(inputs[1].value, (int, float)) and not isinstance(inputs[1].value, bool) and inputs[1].value > 0:
            origin = self.exact[src.tid][0]
        elif name in SINGULAR_AT_ZERO and self._exact(st, src):
            info = st.t.get(out.tid)
            if info is None or info.rg is not True or not st.grad_enabled:
                return
            span, made = self.it.span_of(node), self.exact[src.tid][0]
            arg = node.args[0] if isinstance(node, ast.Call) and node.args and not (
                isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) not in _MODULES) else \
                node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None
            subject = ast.unparse(arg) if arg is not None else "its input"
            self.it.emit(Event("nonfinite_branch", span, {
                "op": ast.unparse(node) if len(ast.unparse(node)) <= 40 else name, "line": span.row,
                "mask": f"{subject} > 0",
                "target": f"everything upstream: `{subject}` is exactly 0 here (it is made from the zeros of line "
                          f"{made.row}), where the derivative of `{name}` is infinite, and a `where` or a mask after it "
                          f"cannot remove that (keep the argument away from 0 before the op)"},
                related=(Related(made, "the zeros it is made from", "note"),)))
            return
        if origin is not None:
            self.exact[out.tid] = (origin, self._stamp(st, out.tid))

    def after(self, st: State, name: str, src: Optional[TensorV], out: Value, node: ast.AST) -> None:
        if not isinstance(out, TensorV) or src is None:
            return
        if name in ("masked_fill", "masked_fill_") and isinstance(node, ast.Call):
            args = list(node.args)
            if isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) in _MODULES:
                args = args[1:]  # torch.masked_fill(x, mask, value)
            value = args[1] if len(args) > 1 else next((k.value for k in node.keywords if k.arg == "value"), None)
            if value is not None and _NEG_INF.match(ast.unparse(value).replace(" ", "")):
                self.neginf[out.tid] = ast.unparse(args[0]) if args else "the mask"
                self.neginf_at[out.tid] = self.it.span_of(node)
        elif name == "log_softmax" and src.tid in self.neginf:
            # log_softmax keeps the -inf of the masked entries (their probability is an exact 0)
            self.neginf[out.tid] = self.neginf[src.tid]
            self.neginf_at[out.tid] = self.it.span_of(node)
        elif name in ("softmax", "exp") and src.tid in self.neginf:
            self.zeros[out.tid] = self.neginf[src.tid]
        elif name == "log" and src.tid in self.zeros:
            self._log_of_zeros(st, src, out, node)

    def product(self, st: State, inputs: List[Any], out: Value, node: ast.AST) -> None:
        """``p * logp`` (an entropy) with ``p`` the exact zeros of a softmax over ``-inf`` and
        ``logp`` the ``-inf`` of the same entries: ``0 x -inf`` is NaN in the forward, and the
        product's backward multiplies the incoming gradient by ``-inf`` there, so a later
        ``nan_to_num``/mask/``where`` that drops those entries still sends NaN upstream (GW720,
        reported where the ``-inf`` values are made: a finite floor there is the fix)."""
        if len(inputs) < 2 or not isinstance(out, TensorV) or not st.grad_enabled:
            return
        a, b = inputs[0], inputs[1]
        for z, n in ((a, b), (b, a)):
            if not (isinstance(z, TensorV) and isinstance(n, TensorV)):
                continue
            mask = self.zeros.get(z.tid)
            if mask is None or self.neginf.get(n.tid) != mask or n.tid not in self.neginf_at:
                continue
            info = st.t.get(out.tid)
            if info is None or info.rg is not True:
                return
            made, span = self.neginf_at[n.tid], self.it.span_of(node)
            self.it.emit(Event("nonfinite_branch", made, {
                "op": ast.unparse(node) if len(ast.unparse(node)) <= 40 else "the product", "line": span.row,
                "mask": mask,
                "target": f"everything upstream: these values are -inf where `{mask}` holds, and the product at "
                          f"line {span.row} multiplies them by their exact-zero probabilities (0 x -inf); a "
                          f"`nan_to_num`, mask or `where` after it hides the NaN of the forward, not of the backward "
                          f"(floor them at a finite value, e.g. `.clamp_min(-1e4)`)"},
                related=(Related(span, "0 x -inf here: NaN, and a NaN gradient", "note"),)))
            return

    def _log_of_zeros(self, st: State, src: TensorV, out: Value, node: ast.AST) -> None:
        info = st.t.get(out.tid)
        if info is None or info.rg is not True:
            return
        span = self.it.span_of(node)
        self.it.emit(Event("nonfinite_branch", span, {
            "op": ast.unparse(node) if len(ast.unparse(node)) <= 40 else "log", "line": span.row,
            "mask": self.zeros[src.tid],
            "target": "everything upstream once those entries are masked out (a softmax over -inf is an exact 0, "
                      "and log(0) = -inf; use log_softmax, or clamp before the log)"}))
