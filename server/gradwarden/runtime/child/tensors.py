"""Facts about tensors: storage, byte extent, shared elements, internal overlap."""
import torch


try:
    from torch.utils.weak import WeakIdKeyDictionary
except ImportError:  # older torch: the registries keyed by tensors are off
    WeakIdKeyDictionary = None


def tensor_registry():
    """A dictionary keyed by tensors (by identity, weakly), or None when torch has none."""
    return WeakIdKeyDictionary() if WeakIdKeyDictionary is not None else None


def _storage_key(t):
    try:
        ptr = t.data_ptr()
    except Exception:  # noqa: BLE001 - no storage (meta, sparse, some subclasses)
        return None
    try:
        return ptr - t.storage_offset() * t.element_size()
    except Exception:  # noqa: BLE001
        return ptr


def _extent(t):
    """Byte range [lo, hi) of ``t`` in its storage (assumes non-negative strides)."""
    try:
        n = t.numel()
        es = t.element_size()
        lo = t.storage_offset() * es
        if n == 0:
            return lo, lo
        span = 1
        for size, stride in zip(t.shape, t.stride()):
            if size > 1:
                span += (size - 1) * abs(stride)
        return lo, lo + span * es
    except Exception:  # noqa: BLE001
        return 0, 1 << 62


def _overlaps(a, b):
    """True when ``a`` and ``b`` (views of one storage) share at least one element: proof that
    a write into ``b`` changed values of ``a``. Interleaved views (the chunks of one tensor
    along an inner dimension) have overlapping byte ranges but no common element."""
    try:
        if a.device != b.device:
            return False
    except Exception:  # noqa: BLE001
        return False
    alo, ahi = _extent(a)
    blo, bhi = _extent(b)
    if not (alo < bhi and blo < ahi):
        return False
    try:
        es = a.element_size()
        if (es == b.element_size() and a.storage_offset() == b.storage_offset() and a.shape == b.shape
                and a.stride() == b.stride()):
            return True
        if a.is_contiguous() and b.is_contiguous():
            return True  # two dense byte ranges that intersect
        if es != b.element_size() or alo % es or blo % es:
            return True  # reinterpreted dtypes: keep the byte-range answer
        n = max(ahi, bhi) // es
        if n > (1 << 26):
            return True
        with torch.no_grad(), torch._C.DisableTorchFunction():
            index = torch.arange(n, dtype=torch.int64)
            ia = index.as_strided(tuple(a.shape), a.stride(), a.storage_offset()).reshape(-1)
            ib = index.as_strided(tuple(b.shape), b.stride(), b.storage_offset()).reshape(-1)
            return bool(torch.isin(ia, ib).any())
    except Exception:  # noqa: BLE001
        return True


def _internal_overlap(t):
    """True when several elements of ``t`` share memory (a 0 stride on a dimension > 1)."""
    try:
        return any(st == 0 and s > 1 for s, st in zip(t.shape, t.stride()))
    except Exception:  # noqa: BLE001
        return False


def _describe(t):
    try:
        return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": str(t.device),
                "type": t.type()}
    except Exception:  # noqa: BLE001
        return {}
