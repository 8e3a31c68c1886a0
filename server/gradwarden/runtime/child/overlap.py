"""In-place writes whose memory overlaps in ways PyTorch does not check (GW714, GW713).

PyTorch refuses a write whose destination has a 0 stride (an ``expand``) or whose source
partially overlaps it, but only where it can tell cheaply: for strided views that are not
dense it answers "too hard" and writes anyway. Two such writes are silent:

- the destination's elements do not map to distinct memory (``x.unfold(d, size, step)`` with
  ``step < size``, an ``as_strided`` view): every window that shares an element applies the
  update to it, so ``windows -= windows.mean(-1, keepdim=True)`` subtracts several means from
  one pixel (GW714);
- the source is another view of the destination's memory (``x[:, 1:] = x[:, :-1]`` on a
  2-D tensor, the swap ``a, b = b, a`` of two halves): the copy reads values it has already
  overwritten, and the result depends on the kernel's order (GW713).

Neither makes the write wrong by itself (``fill_`` or ``relu_`` of overlapping windows, or a
shift whose kernel happens to read before it writes, give what was asked). The proof is the
operation's own result: before the write, the same call is made on a private dense copy of the
destination (with the overlapping sources copied too); after the write, the destination holds
something else. Only then is the write reported. The copies are made only for the rare writes
that pass the cheap memory tests (a non-contiguous destination whose strides cannot rule out
overlap, or a source in the destination's storage), and only up to ``_MAX_NUMEL`` elements.
"""
import torch

from . import smear as _smear
from .records import _make_write, _op_name, _write_sites
from .report import _finding, _internal_error
from .tensors import _describe, _overlaps, _storage_key
from .userfiles import _caller

_Tensor = torch.Tensor
_MAX_NUMEL = 1 << 22

# random fills: their result is not a function of the arguments, nothing to compare
_RANDOM = frozenset(("normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_", "cauchy_",
                     "log_normal_", "rrelu_", "dropout_", "dropout", "alpha_dropout", "feature_alpha_dropout",
                     "dropout1d", "dropout2d", "dropout3d", "rrelu"))


def _dense_or_disjoint(t):
    """True when the strides alone show that ``t``'s elements are distinct memory: sorted by
    stride, each dimension steps past everything the smaller ones span."""
    try:
        if t.is_contiguous():
            return True
        dims = sorted((abs(st), s) for s, st in zip(t.shape, t.stride()) if s > 1)
    except Exception:  # noqa: BLE001
        return True
    span = 0
    for stride, size in dims:
        if stride == 0:
            return True  # an expand: PyTorch raises itself (GW301)
        if stride <= span:
            return False
        span += (size - 1) * stride
    return True


def _offsets(t):
    """The storage offsets of ``t``'s elements, in order (a tensor of ``t.numel()`` int64)."""
    off = torch.zeros((), dtype=torch.int64)
    for size, stride in zip(t.shape, t.stride()):
        off = off.unsqueeze(-1) + torch.arange(size, dtype=torch.int64) * stride
    return off.reshape(-1) + t.storage_offset()


def _shares_elements(t):
    """True when two elements of ``t`` are one memory cell (exact, for at most _MAX_NUMEL)."""
    n = t.numel()
    if n < 2 or n > _MAX_NUMEL:
        return False
    with torch.no_grad(), torch._C.DisableTorchFunction():
        return int(torch.unique(_offsets(t)).numel()) < n


def _common_elements(a, b):
    """True when views ``a`` and ``b`` of one storage (same element size) share an element."""
    if a.element_size() != b.element_size() or a.numel() > _MAX_NUMEL or b.numel() > _MAX_NUMEL:
        return _overlaps(a, b)
    with torch.no_grad(), torch._C.DisableTorchFunction():
        return bool(torch.isin(_offsets(a), _offsets(b)).any())


def _same_view(a, b):
    try:
        return (a.storage_offset() == b.storage_offset() and a.shape == b.shape and a.stride() == b.stride()
                and a.dtype == b.dtype)
    except Exception:  # noqa: BLE001
        return False


class _Pending(object):
    __slots__ = ("func", "dest", "expected", "code", "target", "index")


def before_write(func, args, kwargs, target):
    """Called before an in-place call that writes ``target`` (its first argument). Returns what
    ``after_write`` needs when the write may overlap itself, else None (the common case costs
    a contiguity test and a storage comparison per tensor argument)."""
    name = getattr(func, "__name__", "")
    if name in _RANDOM or target.layout != torch.strided or not (target.is_floating_point() or target.is_complex()
                                                                  or target.dtype in _EXACT_DTYPES):
        return None
    setitem = name == "__setitem__"
    sources = args[2:3] if setitem else args[1:]
    key = None
    shared = []
    for a in sources:
        if isinstance(a, _Tensor):
            if key is None:
                key = _storage_key(target)
            if key is not None and a.device == target.device and _storage_key(a) == key:
                shared.append(a)
    inner = not _dense_or_disjoint(target)
    if not shared and not inner:
        return None
    try:
        with torch.no_grad(), torch._C.DisableTorchFunction():
            dest = target
            if setitem:
                dest = target[args[1]]
                if dest._base is None or not (dest._base is target or dest._base is target._base):
                    return None  # advanced indexing: index_put_, whose positions are a gather
            if dest.numel() > _MAX_NUMEL or dest.numel() == 0:
                return None
            code = None
            if inner and not _dense_or_disjoint(dest) and _shares_elements(dest):
                code = "GW714"
            elif any(not _same_view(a, dest) and _common_elements(a, dest) for a in shared):
                code = "GW713"
            if code is None:
                if len(shared) == 1:  # a copy between two slots: one step of a shift loop? (smear.py)
                    _smear.after_disjoint_copy(key, dest, shared[0], target)
                return None
            copy = target.clone()
            rest = tuple(a.clone() if any(a is s for s in shared) else a for a in args[1:])
            func(copy, *rest, **kwargs) if kwargs else func(copy, *rest)
            expected = copy[args[1]] if setitem else copy
    except Exception:  # noqa: BLE001 - the call fails on the copy: nothing to compare
        return None
    p = _Pending()
    p.func, p.dest, p.expected, p.code, p.target = func, dest, expected, code, target
    return p


_EXACT_DTYPES = frozenset((torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool))


def after_write(p):
    """After the real write: report it when the destination does not hold what the call
    computes on memory of its own."""
    try:
        with torch.no_grad(), torch._C.DisableTorchFunction():
            actual, expected = p.dest, p.expected
            if actual.shape != expected.shape or torch.equal(actual, expected):
                return
            if actual.is_floating_point() or actual.is_complex():
                if torch.allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True):
                    return
                wrong = int((~torch.isclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True)).sum())
            else:
                wrong = int((actual != expected).sum())
        _report(p, wrong)
    except Exception:  # noqa: BLE001
        _internal_error("overlap check")


def _report(p, wrong):
    w = _make_write(p.func, _caller(4))
    site, extra = _write_sites(w)
    op = _op_name(p.func)
    if p.code == "GW714":
        message = ("in-place %s writes into a view whose elements share memory (overlapping windows: unfold with "
                   "step < size, as_strided): each shared element is updated once per window, so %d of its %d "
                   "values differ from what %s computes for them; values and gradients are silently wrong" % (
                       op, wrong, p.dest.numel(), op))
    else:
        message = ("in-place %s reads a source that is another view of the memory it writes (a shifted or swapped "
                   "slice of the same tensor): it reads values it already overwrote, so %d of the %d values "
                   "written differ from the source's; values and gradients are silently wrong" % (
                       op, wrong, p.dest.numel()))
    _finding(("overlap", p.code, tuple(site or ())), code=p.code, kind="overlapping-write", severity="warning",
             message=message, write_site=site, sites=extra, write_op=op, tensor=_describe(p.target))
