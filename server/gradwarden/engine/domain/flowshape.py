"""Tensor shapes, as far as the code at hand tells them: enough to know that a tensor is *not*
a scalar (``backward()`` without a gradient needs exactly one element).

A shape is a tuple of dims; a dim is an ``int`` (known), ``None`` (unknown) or, first in the
tuple only, ``...`` (any number of unknown leading dims: the output of ``nn.Linear(_, 10)``
on an input of unknown rank is ``(..., 10)``). ``None`` instead of a tuple: nothing known.
Pure functions, no torch: each op's rule is written from its documented semantics and
errs towards "unknown" (a wrong "non-scalar" would be a false alarm).
"""
from __future__ import annotations

from typing import Iterable, List, Optional, Sequence, Tuple, Union

Dim = Optional[int]
Shape = Optional[Tuple[object, ...]]
ELL = ...


def is_nonscalar(shape: Shape) -> bool:
    """True when the tensor certainly does not hold exactly one element."""
    if shape is None:
        return False
    return any(isinstance(d, int) and d != 1 for d in shape if d is not ELL)


def maybe_nonscalar(shape: Shape) -> bool:
    """A shape of known rank with unknown dims (``(batch, 1)``): one element only when every
    unknown dim is 1."""
    return shape is not None and ELL not in shape and any(d is None for d in shape) and \
        all(d is None or d == 1 for d in shape)


def is_scalar(shape: Shape) -> bool:
    """True when the tensor certainly holds exactly one element (``()``, ``(1,)``, ``(1, 1)``)."""
    return shape is not None and all(isinstance(d, int) and d == 1 for d in shape)


def _split(shape: Shape) -> Optional[Tuple[bool, Tuple[Dim, ...]]]:
    """(has leading ..., the known-rank trailing part), or None when ... is not leading."""
    if shape is None:
        return True, ()
    if ELL in shape:
        if shape[0] is not ELL or ELL in shape[1:]:
            return None
        return True, tuple(shape[1:])  # type: ignore[arg-type]
    return False, tuple(shape)  # type: ignore[arg-type]


def broadcast(shapes: Sequence[Shape]) -> Shape:
    """Shape of an elementwise op over ``shapes`` (torch broadcasting)."""
    parts = [_split(s) for s in shapes]
    if not parts or any(p is None for p in parts):
        return None
    n = max(len(p[1]) for p in parts)  # type: ignore[index]
    open_ = any(p[0] for p in parts)  # type: ignore[index]
    out: List[Dim] = []
    for i in range(1, n + 1):
        known: List[int] = []
        unknown = False
        for has_ell, dims in parts:  # type: ignore[misc]
            if i <= len(dims):
                d = dims[-i]
                if d is None:
                    unknown = True
                else:
                    known.append(d)
            elif has_ell:
                unknown = True
        big = [d for d in known if d != 1]
        if big:
            out.append(big[0])
        elif unknown:
            out.append(None)
        else:
            out.append(1)
    out.reverse()
    return ((ELL,) if open_ else ()) + tuple(out)


def reduce(shape: Shape, dims: Optional[Sequence[int]], keepdim: bool) -> Shape:
    """``sum``/``mean``/... over ``dims`` (None: all of them)."""
    if dims is None:
        if not keepdim:
            return ()
        if shape is None or ELL in shape:
            return None
        return tuple(1 for _ in shape)
    sp = _split(shape)
    if sp is None:
        return None
    has_ell, rest = sp
    rank = len(rest)
    norm = []
    for d in dims:
        if d < 0:
            d += rank
        elif has_ell:
            return None  # a positive dim counted from an unknown start
        if not 0 <= d < rank:
            return None
        norm.append(d)
    out = [(1 if i in norm else x) for i, x in enumerate(rest)] if keepdim else \
        [x for i, x in enumerate(rest) if i not in norm]
    return ((ELL,) if has_ell else ()) + tuple(out)


def numel(shape: Shape) -> Optional[int]:
    if shape is None or ELL in shape or any(d is None for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d  # type: ignore[operator]
    return n


def reshape(shape: Shape, sizes: Sequence[Dim]) -> Shape:
    """``view``/``reshape`` to ``sizes`` (ints, at most one -1, None for unknown values)."""
    if any(s is not None and s < -1 for s in sizes):
        return None
    if sizes.count(-1) > 1:
        return None
    if -1 in sizes:
        total = numel(shape)
        rest = [s for s in sizes if s != -1]
        if total is not None and all(s is not None for s in rest):
            prod = 1
            for s in rest:
                prod *= s  # type: ignore[operator]
            fill: Dim = total // prod if prod and total % prod == 0 else None
        else:
            fill = None
        return tuple(fill if s == -1 else s for s in sizes)
    return tuple(sizes)


def transpose(shape: Shape, a: int, b: int) -> Shape:
    if shape is None or ELL in shape:
        return None
    rank = len(shape)
    a, b = (a + rank if a < 0 else a), (b + rank if b < 0 else b)
    if not (0 <= a < rank and 0 <= b < rank):
        return None
    dims = list(shape)
    dims[a], dims[b] = dims[b], dims[a]
    return tuple(dims)


def permute(shape: Shape, order: Sequence[int]) -> Shape:
    if shape is None or ELL in shape or len(order) != len(shape):
        return None
    rank = len(shape)
    try:
        return tuple(shape[o + rank if o < 0 else o] for o in order)
    except IndexError:
        return None


def squeeze(shape: Shape, dim: Optional[int]) -> Shape:
    if shape is None or ELL in shape:
        return None
    if dim is None:
        if any(d is None for d in shape):
            return None
        return tuple(d for d in shape if d != 1)
    rank = len(shape)
    dim = dim + rank if dim < 0 else dim
    if not 0 <= dim < rank:
        return None
    if shape[dim] == 1:
        return shape[:dim] + shape[dim + 1:]
    return shape if shape[dim] is not None else None


def unsqueeze(shape: Shape, dim: int) -> Shape:
    if shape is None or ELL in shape:
        return None
    rank = len(shape) + 1
    dim = dim + rank if dim < 0 else dim
    if not 0 <= dim < rank:
        return None
    return shape[:dim] + (1,) + shape[dim:]


def flatten(shape: Shape, start: int, end: int) -> Shape:
    if shape is None or ELL in shape:
        return None
    rank = len(shape)
    if rank == 0:
        return (1,)
    s, e = (start + rank if start < 0 else start), (end + rank if end < 0 else end)
    if not (0 <= s <= e < rank):
        return None
    mid = shape[s:e + 1]
    n: Dim = 1
    for d in mid:
        n = None if d is None or n is None else n * d  # type: ignore[operator]
    return shape[:s] + (n,) + shape[e + 1:]


def matmul(a: Shape, b: Shape) -> Shape:
    """``a @ b`` (torch.matmul's 1-D / 2-D / batched rules)."""
    if b is not None and ELL not in b:
        if len(b) == 1:  # (..., n, k) @ (k,) -> (..., n)
            if a is not None and ELL not in a:
                return a[:-1] if len(a) >= 1 else None
            sa = _split(a)
            return None if sa is None or not sa[1] else (ELL,) + sa[1][:-1]
        if len(b) == 2:  # (..., k) @ (k, m) -> (..., m): also right when a is 1-D
            m = b[1]
            if a is not None and ELL not in a:
                if len(a) == 1:
                    return (m,)
                return a[:-1] + (m,)
            sa = _split(a)
            if sa is None:
                return None
            return (ELL,) + sa[1][:-1] + (m,) if sa[1] else (ELL, m)
        if a is not None and ELL not in a and len(a) >= 2:
            batch = broadcast([a[:-2], b[:-2]])
            return None if batch is None else tuple(batch) + (a[-2], b[-1])
        return None
    return None


def cat(shapes: Sequence[Shape], dim: int) -> Shape:
    if not shapes or any(s is None or ELL in s for s in shapes):
        return None
    rank = len(shapes[0])  # type: ignore[arg-type]
    if any(len(s) != rank for s in shapes) or rank == 0:  # type: ignore[arg-type]
        return None
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        return None
    total: Dim = 0
    for s in shapes:
        x = s[d]  # type: ignore[index]
        total = None if x is None or total is None else total + x  # type: ignore[operator]
    first = list(shapes[0])  # type: ignore[arg-type]
    first[d] = total
    return tuple(first)


def stack(shapes: Sequence[Shape], dim: int) -> Shape:
    if not shapes:
        return None
    base = shapes[0]
    if base is None or ELL in base:
        return (len(shapes), ELL) if dim == 0 and len(shapes) > 1 else None
    return unsqueeze(base, dim) if len(shapes) == 1 else _set_dim(unsqueeze(base, dim), dim, len(shapes))


def _set_dim(shape: Shape, dim: int, n: int) -> Shape:
    if shape is None:
        return None
    rank = len(shape)
    d = dim + rank if dim < 0 else dim
    dims = list(shape)
    dims[d] = n
    return tuple(dims)


def getitem(shape: Shape, index: Sequence[object]) -> Shape:
    """Basic indexing: ``index`` items are ints, ``slice`` objects with constant bounds,
    ``None`` (new axis), ``...``, or ``"?"`` (a slice with unknown bounds)."""
    if shape is None or ELL in shape:
        return None
    if sum(1 for i in index if i is ELL) > 1:
        return None
    n_consuming = sum(1 for i in index if i is not None and i is not ELL)
    if n_consuming > len(shape):
        return None
    if ELL in index:
        k = index.index(ELL)
        fill = len(shape) - n_consuming
        index = list(index[:k]) + [slice(None)] * fill + list(index[k + 1:])
    out: List[Dim] = []
    pos = 0
    for item in index:
        if item is None:
            out.append(1)
            continue
        d = shape[pos]
        pos += 1
        if isinstance(item, int):
            continue
        if isinstance(item, slice):
            if d is None:
                out.append(None)
                continue
            out.append(len(range(*item.indices(d))))  # type: ignore[arg-type]
        else:
            out.append(None)
    out.extend(shape[pos:])  # type: ignore[arg-type]
    return tuple(out)


def ints(values: Iterable[object]) -> Optional[List[Dim]]:
    """Python values (already unwrapped) as dims: ints stay, anything else is unknown."""
    out: List[Dim] = []
    for v in values:
        if isinstance(v, bool):
            return None
        out.append(v if isinstance(v, int) else None)
    return out


Index = Union[int, slice, None]
