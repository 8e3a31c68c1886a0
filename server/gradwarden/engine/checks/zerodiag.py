"""Exact zeros on the diagonal of a pairwise self-difference, and the singular op after them (GW720).

``rel = a.unsqueeze(1) - a.unsqueeze(0)`` (also ``a[:, None] - a[None]``, ``a[:, None] - a``, a
batched ``a.unsqueeze(2) - a.unsqueeze(1)``) is the same tensor minus itself broadcast over a new
pair of adjacent dims: every element whose two pair indices are equal is exactly 0. The zeros
survive the ops that keep a zero a zero (``abs``, ``square``, a power >= 1, ``neg``, a product,
``sum``/``mean``/``norm``/``vector_norm`` over a dim that is not one of the pair; ``transpose``,
``swapaxes``, ``t`` and ``permute`` move the pair dims with the elements). A division by
such a tensor, or its ``sqrt``/``rsqrt``/``log``/``reciprocal``/power below 1, has an infinite
derivative there: backward makes ``0 x inf = NaN`` (or ``0 / 0``) at the diagonal, and torch's
backward of the ops above carries it to every parameter upstream, whatever mask (``masked_fill``,
``torch.where``) is applied to the result. Measured on torch 2.13 (CPU): ``(rel / rel.norm(dim=-1,
keepdim=True)).masked_fill(eye, 0)`` and ``((a[:, None] - a[None]) ** 2).sum(-1).sqrt()`` give NaN
gradients; ``vector_norm`` itself at 0 has a zero subgradient (the hazard is the op after it);
``torch.cdist(a, a)`` is not a source (its backward returns 0 at a zero distance, which also stops
a NaN made after it, and above 25 rows its diagonal is not exactly 0).

Anything else applied to the tensor (an addition, ``clamp``, ``+ eps``, ``masked_fill`` of the
diagonal with a non-zero, ``torch.where``), a reduction over a pair dim or over everything, a
difference of two different tensors, or a write to the source between the two views loses the
fact. Dims are kept counted from the end when the rank is known (broadcasting never moves them);
when it is not, a step that needs it loses the fact.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.diagnostic import Related
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, SeqV, State, TensorV, Value

Dims = Tuple[int, int]
# (where the difference was made, the pair dims, the rank or None, (version, data writes) then)
Fact = Tuple[Any, Dims, Optional[int], Tuple[int, int]]

# elementwise ops whose output is 0 wherever their input is, and whose backward carries a NaN
# (``relu`` keeps the value but its backward writes 0 at x <= 0, so it is not here)
KEEP = frozenset({"abs", "neg", "square", "clone", "contiguous", "to", "float", "double", "USub"})
# reductions over ``dim``: (index of dim among the inputs, index of keepdim)
REDUCE = {"sum": (1, 2), "mean": (1, 2), "norm": (2, 3), "vector_norm": (2, 3)}
SINGULAR = frozenset({"sqrt", "rsqrt", "log", "log2", "log10", "reciprocal"})
# layouts that move dims and keep every element (the diagonal's zeros move with the pair dims)
MOVE = frozenset({"transpose", "swapaxes", "swapdims", "t", "permute"})
DIVIDE = frozenset({"Div", "div", "true_divide", "divide"})
_MODULES = ("torch", "math", "F", "torch.special", "special", "torch.linalg")


def _int(v: Any) -> Optional[int]:
    return v.value if isinstance(v, ConstV) and type(v.value) is int else None


def _number(v: Any) -> Optional[float]:
    if isinstance(v, ConstV) and isinstance(v.value, (int, float)) and not isinstance(v.value, bool):
        return float(v.value)
    return None


class PairZeros:
    """Held by ``flow.zeros`` as ``pairs``: one-dim insertions of a tensor (``a.unsqueeze(i)``,
    ``a[:, None]``), the pairwise self-differences made of two of them, and what keeps their zeros."""

    def __init__(self, it: Any, stamp: Any) -> None:
        self.it = it
        self._stamp = stamp  # ExactZeros._stamp: (version, data writes) of a tensor now
        # tid -> (source tid, the source's stamp then, the new dim in the output, the output's rank or None)
        self.views: Dict[int, Tuple[int, Tuple[int, int], int, Optional[int]]] = {}
        self.pairs: Dict[int, Fact] = {}

    @property
    def live(self) -> bool:
        return bool(self.views)

    def forget(self) -> None:
        self.views.clear()
        self.pairs.clear()

    def _rank(self, t: TensorV) -> Optional[int]:
        shape = self.it.flow.shapes.get(t.tid)
        if not isinstance(shape, tuple) or ... in shape:
            return None
        return len(shape)

    def _fact(self, st: State, v: Any) -> Optional[Fact]:
        if not isinstance(v, TensorV) or v.tid not in self.pairs:
            return None
        fact = self.pairs[v.tid]
        return fact if fact[3] == self._stamp(st, v.tid) else None

    # ------------------------------------------------------------------ the two views
    def note_insert(self, st: State, src: Any, out: Any, dim: Optional[int]) -> None:
        """``out`` is ``src`` with one new dim of size 1 at ``dim`` (counted in ``out``)."""
        if not isinstance(src, TensorV) or not isinstance(out, TensorV) or dim is None or out.tid == src.tid:
            return
        rank = self._rank(src)
        rank = rank + 1 if rank is not None else None
        if rank is not None and dim >= 0:
            dim -= rank
        self.views[out.tid] = (src.tid, self._stamp(st, src.tid), dim, rank)

    def note_subscript(self, st: State, node: ast.Subscript, src: Any, out: Any) -> None:
        """``a[:, None]``, ``a[None]``, ``a[..., None, :]``: one ``None`` among full slices."""
        items = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        nones = [k for k, e in enumerate(items) if isinstance(e, ast.Constant) and e.value is None]
        ells = [k for k, e in enumerate(items) if isinstance(e, ast.Constant) and e.value is Ellipsis]
        full = all(isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None
                   for k, e in enumerate(items) if k not in nones and k not in ells)
        if len(nones) != 1 or len(ells) > 1 or not full:
            return
        k = nones[0]
        if ells and ells[0] < k:
            dim = -(len(items) - k)  # counted from the end: `a[..., None, :]` -> -2
        else:
            dim = k
        self.note_insert(st, src, out, dim)

    def _operand(self, st: State, v: Any) -> Optional[Tuple[int, Optional[int], Optional[int]]]:
        """(source tid, new dim, rank of the view) of a recorded insertion still valid; the source
        itself, unchanged, reads as (tid, None, rank)."""
        if not isinstance(v, TensorV):
            return None
        if v.tid in self.views:
            src, stamp, dim, rank = self.views[v.tid]
            return (src, dim, rank) if stamp == self._stamp(st, src) and stamp == self._stamp(st, v.tid) else None
        return v.tid, None, self._rank(v)

    def _difference(self, st: State, left: Any, right: Any) -> Optional[Tuple[Dims, Optional[int]]]:
        a, b = self._operand(st, left), self._operand(st, right)
        if a is None or b is None or a[0] != b[0] or (a[1] is None and b[1] is None):
            return None
        if a[1] is None or b[1] is None:  # `a[:, None] - a`: the plain one broadcasts as a new dim 0
            view = a if b[1] is None else b
            rank, dim = view[2], view[1]
            if dim is None:
                return None
            front = dim + rank if rank is not None and dim < 0 else dim
            if front != 1:
                return None
            return ((-rank, 1 - rank) if rank is not None else (0, 1)), rank
        if a[2] != b[2]:
            return None
        da, db = a[1], b[1]
        if (da < 0) != (db < 0) or abs(da - db) != 1:  # adjacent new dims: a pairwise difference
            return None
        return (min(da, db), max(da, db)), a[2]

    # ------------------------------------------------------------------ what keeps the zeros
    def _reduced(self, fact: Fact, dims: List[int], keepdim: bool) -> Optional[Fact]:
        origin, pair, rank, _ = fact
        norm = []
        for d in dims:
            if rank is not None:
                d = d - rank if d >= 0 else d
            elif any((d < 0) != (p < 0) for p in pair):
                return None
            if d in pair:
                return None  # a reduction over a pair dim: the diagonal is summed with the rest
            norm.append(d)
        if keepdim:
            return origin, pair, rank, (0, 0)

        def moved(p: int) -> int:
            return p + sum(1 for d in norm if d > p) if p < 0 else p - sum(1 for d in norm if d < p)

        new = (moved(pair[0]), moved(pair[1]))
        return origin, new, (rank - len(norm) if rank is not None else None), (0, 0)

    def _dims(self, v: Any, st: State) -> Optional[List[int]]:
        if _int(v) is not None:
            return [_int(v)]  # type: ignore[list-item]
        if isinstance(v, ConstV) and isinstance(v.value, tuple) and v.value and all(type(x) is int for x in v.value):
            return list(v.value)
        if isinstance(v, SeqV):
            items = self.it.ev.known_items(v, st)
            ints = [_int(x) for x in items or ()]
            return ints if ints and all(x is not None for x in ints) else None  # type: ignore[misc]
        return None

    def track(self, st: State, name: str, inputs: List[Value], kwargs: Dict[str, Value], out: Any,
              node: ast.AST) -> None:
        if not isinstance(out, TensorV):
            return
        if name == "unsqueeze" and inputs:
            self.note_insert(st, inputs[0], out, _int(inputs[1]) if len(inputs) > 1 else _int(kwargs.get("dim")))
        if not self.views:
            return
        if name in ("Sub", "sub", "subtract") and len(inputs) >= 2 and "alpha" not in kwargs:
            got = self._difference(st, inputs[0], inputs[1])
            if got is not None:
                self.pairs[out.tid] = (self.it.span_of(node), got[0], got[1], self._stamp(st, out.tid))
            return
        if not self.pairs:
            return
        src = inputs[0] if inputs else None
        fact, new = self._fact(st, src), None
        if name in DIVIDE and len(inputs) >= 2 and self._fact(st, inputs[1]) is not None:
            self._singular(st, "division", inputs[1], self._fact(st, inputs[1]), out, node)
            return
        if name in SINGULAR and fact is not None:
            self._singular(st, name, src, fact, out, node)
            return
        if name in ("Pow", "pow") and fact is not None and len(inputs) > 1:
            e = _number(inputs[1])
            if e is not None and e < 1 and e != 0:
                self._singular(st, "negative power" if e < 0 else "fractional power", src, fact, out, node)
                return
            new = fact if e is not None and e >= 1 else None
        elif name in ("Mult", "mul", "multiply") and len(inputs) >= 2:
            hit = next((x for x in inputs[:2] if self._fact(st, x) is not None), None)
            other = inputs[1] if hit is inputs[0] else inputs[0]
            if hit is not None:
                f = self._fact(st, hit)
                # dims counted from the end survive broadcasting; counted from the front only with a number
                new = f if f is not None and (f[1][0] < 0 or not isinstance(other, TensorV)) else None
        elif name in KEEP and fact is not None:
            new = fact
        elif name == "unsqueeze" and fact is not None:
            u = _int(inputs[1]) if len(inputs) > 1 else _int(kwargs.get("dim"))
            new = self._inserted(fact, u)
        elif name in MOVE and fact is not None:
            new = self._moved(st, fact, name, inputs[1:], kwargs)
        elif name in REDUCE and fact is not None:
            at, kat = REDUCE[name]
            dim = inputs[at] if len(inputs) > at else kwargs.get("dim")
            keep = inputs[kat] if len(inputs) > kat else kwargs.get("keepdim", ConstV(False))
            dims = self._dims(dim, st) if dim is not None else None
            if dims is not None and isinstance(keep, ConstV) and isinstance(keep.value, bool):
                new = self._reduced(fact, dims, keep.value)
        if new is not None:
            self.pairs[out.tid] = (new[0], new[1], new[2], self._stamp(st, out.tid))

    def _moved(self, st: State, fact: Fact, name: str, args: List[Value], kwargs: Dict[str, Value]) -> Optional[Fact]:
        """``transpose``/``swapaxes``/``t``/``permute``: the same elements, the pair dims moved (the
        diagonal stays exactly 0 wherever its two indices go). None when a dim cannot be placed."""
        origin, pair, rank, _ = fact
        if name == "t":
            perm: Optional[List[int]] = [1, 0] if rank in (None, 2) else None
            if perm is None or pair[0] < -2 or pair[1] < -2:
                return None
            rank = 2
        elif name == "permute":
            raw = args[0] if len(args) == 1 and isinstance(args[0], SeqV) else None
            items = [_int(a) for a in (self.it.ev.known_items(raw, st) or [])] if raw is not None else \
                [_int(a) for a in args]
            if rank is None or len(items) != rank or any(i is None for i in items):
                return None
            perm = [i % rank for i in items]  # type: ignore[operator]
        else:
            d0 = _int(args[0]) if args else _int(kwargs.get("dim0"))
            d1 = _int(args[1]) if len(args) > 1 else _int(kwargs.get("dim1"))
            if d0 is None or d1 is None or rank is None:
                return None
            perm = list(range(rank))
            a, b = d0 % rank, d1 % rank
            perm[a], perm[b] = perm[b], perm[a]
        n = len(perm)
        old = [p % n for p in pair]
        new = tuple(perm.index(p) - n for p in old)  # counted from the end, as with a known rank
        return origin, (min(new), max(new)), n, (0, 0)

    def _inserted(self, fact: Fact, u: Optional[int]) -> Optional[Fact]:
        origin, pair, rank, _ = fact
        if u is None:
            return None
        if rank is not None:
            ub = u if u < 0 else u - (rank + 1)
            return origin, (pair[0] if pair[0] > ub else pair[0] - 1, pair[1] if pair[1] > ub else pair[1] - 1), \
                rank + 1, (0, 0)
        if u < 0 or pair[0] < 0:
            return None
        return origin, (pair[0] if pair[0] < u else pair[0] + 1, pair[1] if pair[1] < u else pair[1] + 1), None, (0, 0)

    # ------------------------------------------------------------------ the finding
    def _singular(self, st: State, op: str, arg: Any, fact: Optional[Fact], out: TensorV, node: ast.AST) -> None:
        info = st.t.get(out.tid)
        if fact is None or info is None or info.rg is not True or not st.grad_enabled:
            return
        span, made = self.it.span_of(node), fact[0]
        if isinstance(node, ast.BinOp):
            subject = ast.unparse(node.right)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                ast.unparse(node.func.value) not in _MODULES:
            subject = ast.unparse(node.func.value) if op != "division" else \
                (ast.unparse(node.args[0]) if node.args else "its divisor")
        elif isinstance(node, ast.Call) and node.args:
            subject = ast.unparse(node.args[1] if op == "division" and len(node.args) > 1 else node.args[0])
        else:
            subject = "its input"
        what = "the division by it" if op == "division" else f"`{op}`" if op in SINGULAR else f"a {op} of it"
        text = ast.unparse(node)
        self.it.emit(Event("nonfinite_branch", span, {
            "op": text if len(text) <= 40 else op, "line": span.row,
            "mask": f"{subject} != 0",
            "target": f"everything upstream: `{subject}` is exactly 0 on its diagonal (it is made from the pairwise "
                      f"difference of a tensor with itself at line {made.row}), where {what} has an infinite "
                      f"derivative, and a mask or `where` after it cannot remove that (keep it away from 0 before "
                      f"the op: `clamp_min(eps)`, or `+ eps` inside the `sqrt`)"},
            related=(Related(made, "a tensor minus itself over a pair of dims: exactly 0 where the two indices are "
                                   "equal", "note"),)))
