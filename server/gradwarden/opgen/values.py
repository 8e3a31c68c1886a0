"""Argument value specs for the measurement templates, and the generic builder that derives a
call template from a schema (type string + parameter name).

A spec is a small immutable description; ``materialize`` turns it into a fresh value for each
measured call (so in-place ops never see a tensor an earlier call modified).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class T:
    """Floating tensor of the given shape (values in (0.1, 0.9)); a slot that may require grad."""

    shape: tuple[int, ...] = (3, 3)
    kind: str = "pos"  # "pos" (0.1..0.9), "sym" (-1..1), "spd" (symmetric positive definite), "sorted"
    dtype: str = "float32"

    def __init__(self, *shape: int, kind: str = "pos", dtype: str = "float32") -> None:
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "dtype", dtype)


@dataclass(frozen=True)
class I:
    """Integer (int64) tensor with values in [low, high); never requires grad."""

    shape: tuple[int, ...]
    high: int = 2
    low: int = 0
    dtype: str = "int64"

    def __init__(self, *shape: int, high: int = 2, low: int = 0, dtype: str = "int64") -> None:
        object.__setattr__(self, "shape", tuple(shape))
        object.__setattr__(self, "high", high)
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "dtype", dtype)


@dataclass(frozen=True)
class Bo:
    """Bool tensor (alternating pattern); never requires grad."""

    shape: tuple[int, ...]

    def __init__(self, *shape: int) -> None:
        object.__setattr__(self, "shape", tuple(shape))


@dataclass(frozen=True)
class Lst:
    """A list (or tuple) of tensor specs: one slot."""

    items: tuple[Any, ...]
    as_tuple: bool = False

    def __init__(self, *items: Any, as_tuple: bool = False) -> None:
        object.__setattr__(self, "items", tuple(items))
        object.__setattr__(self, "as_tuple", as_tuple)


@dataclass(frozen=True)
class Dt:
    """A torch dtype by name (torch.float32...)."""

    name: str


class _Skip(Exception):
    pass


SKIP = object()  # "cannot build this argument"

TENSOR_SPECS = (T, I, Bo)


def is_tensor_spec(v: Any) -> bool:
    return isinstance(v, TENSOR_SPECS)


def is_slot_spec(v: Any) -> bool:
    return isinstance(v, TENSOR_SPECS) or isinstance(v, Lst)


def spec_kind(v: Any) -> str:
    """The argument kind ("T", "L", "N", "B", "S", "O") a spec is passed as."""
    if is_tensor_spec(v):
        return "T"
    if isinstance(v, Lst):
        return "L"
    if isinstance(v, bool):
        return "B"
    if isinstance(v, (int, float)):
        return "N"
    if isinstance(v, (tuple, list)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return "S"
    if v is None:
        return "None"
    return "O"


def spec_requires_grad_capable(v: Any) -> bool:
    if isinstance(v, T):
        return True
    if isinstance(v, Lst):
        return any(isinstance(x, T) for x in v.items)
    return False


def materialize(v: Any, rg: bool, torch: Any, gen: Any) -> Any:
    """Build a fresh value. ``rg``: tensor slots get requires_grad (as non-leaf tensors)."""
    if isinstance(v, T):
        dtype = getattr(torch, v.dtype)
        n = 1
        for s in v.shape:
            n *= s
        if v.kind == "spd":
            k = v.shape[-1]
            a = torch.rand(v.shape, generator=gen, dtype=dtype)
            t = a @ a.transpose(-1, -2) + k * torch.eye(k, dtype=dtype)
        elif v.kind == "sym":
            t = torch.rand(v.shape, generator=gen, dtype=dtype) * 2 - 1
        elif v.kind == "sorted":
            t = torch.linspace(0.1, 0.9, max(n, 1), dtype=dtype).reshape(v.shape)
        else:
            t = torch.rand(v.shape, generator=gen, dtype=dtype) * 0.8 + 0.1
        if rg:
            t = t.requires_grad_(True).clone()  # non-leaf: in-place ops are allowed on it
        return t
    if isinstance(v, I):
        return torch.randint(v.low, v.high, v.shape, generator=gen, dtype=getattr(torch, v.dtype))
    if isinstance(v, Bo):
        n = 1
        for s in v.shape:
            n *= s
        return (torch.arange(n) % 2 == 0).reshape(v.shape)
    if isinstance(v, Lst):
        items = [materialize(x, rg, torch, gen) for x in v.items]
        return tuple(items) if v.as_tuple else items
    if isinstance(v, Dt):
        return getattr(torch, v.name)
    return v


# ---------------------------------------------------------------------------------------------
# Generic builder from schema types


CONFIGS = {
    "2d": (3, 3),
    "1d": (3,),
    "3d": (2, 3, 3),
    "4d": (2, 3, 4, 4),
}
CONFIG_ORDER = ("2d", "1d", "3d", "4d")


def _int_value(name: str, shape: tuple[int, ...]) -> Any:
    nd = len(shape)
    table = {
        "dim": 0, "dim0": 0, "dim1": 1 if nd > 1 else 0, "dim2": 1, "axis": 0, "axis0": 0,
        "axis1": 1 if nd > 1 else 0, "dimension": 0, "source": 0, "destination": 1 if nd > 1 else 0,
        "k": 1, "n": 2, "chunks": 3, "sections": 3, "split_size": 1, "groups": 1, "size": 2,
        "length": 2, "start": 0, "end": 2, "steps": 3, "step": 1, "index": 0, "diagonal": 0,
        "offset": 0, "repeats": 2, "decimals": 0, "num_samples": 1, "low": 0, "high": 3,
        "window_length": 4, "p": 2, "bins": 4, "num_classes": 3, "upscale_factor": 1,
        "downscale_factor": 1, "padding_idx": 0, "row": 3, "col": 3, "m": 3, "numel": 3,
        "from": 0, "to": 3, "N": 2, "blank": 0, "reduction": 1, "mode": 0, "count": 1,
    }
    return table.get(name, 1)


def _scalar_value(name: str) -> Any:
    table = {
        "other": 2.0, "exponent": 2.0, "min": 0.2, "max": 0.8, "value": 1.0, "fill_value": 1.0,
        "p": 2.0, "alpha": 1.0, "beta": 1.0, "end": 3, "start": 0, "self": 2.0, "threshold": 0.5,
        "lambd": 0.5, "n": 2, "x": 0.5, "maxnorm": 1.0, "element": 0.5, "test_element": 0.5,
        "scalar": 2.0, "scalar1": 1.0, "scalar2": 1.0, "weight": 0.5, "ord": 2, "spacing": 1.0,
        "size": 2, "s": 1.0,
    }
    return table.get(name, 1.0)


def _float_value(name: str) -> Any:
    table = {"eps": 1e-5, "p": 0.5, "momentum": 0.1, "alpha": 1.0, "beta": 1.0, "epsilon": 1e-5,
             "dropout": 0.0, "rcond": 1e-5, "tol": 1e-5, "q": 0.5, "mean": 0.0, "std": 1.0,
             "scale": 1.0, "padding": 0.0, "ratio": 0.5, "max_norm": 1.0, "norm_type": 2.0}
    return table.get(name, 0.5)


def _intlist_value(name: str, t: str, shape: tuple[int, ...]) -> Any:
    nd = len(shape)
    fixed = None
    if "[" in t:
        inner = t[t.index("[") + 1: t.index("]")]
        if inner.isdigit():
            fixed = int(inner)
    if name in ("size", "shape", "sizes"):
        return tuple(shape)
    if name in ("dims", "perm"):
        return tuple(reversed(range(nd)))
    if name in ("dim", "dims_self", "dims_other"):
        return (0,) if fixed is None else tuple(range(min(fixed, nd)))
    if name == "repeats":
        return tuple(2 for _ in shape)
    if name in ("split_size", "split_sizes"):
        return (1, shape[0] - 1) if shape else (1,)
    if name in ("shifts",):
        return (1,)
    if name == "pad":
        return (1, 1)
    if name == "kernel_size":
        return (2,) * (fixed or 1)
    if name == "stride":
        return (1,) * (fixed or 1)
    if name == "padding":
        return (0,) * (fixed or 1)
    if name == "dilation":
        return (1,) * (fixed or 1)
    if name == "output_size":
        return (2,) * (fixed or max(nd - 2, 1))
    if name == "output_padding":
        return (0,) * (fixed or 1)
    if name == "normalized_shape":
        return (shape[-1],)
    if name == "indices":
        return (0,)
    if fixed is not None:
        return (1,) * fixed
    return tuple(shape)


def _tensor_value(name: str, shape: tuple[int, ...]) -> Any:
    n0 = shape[0] if shape else 1
    if name in ("index", "indices"):
        return I(*shape, high=min(shape) if shape else 1)
    if name in ("mask", "condition"):
        return Bo(*shape)
    if name in ("vec", "vec1", "vec2", "v"):
        return T(3)
    if name in ("mat", "mat1", "mat2", "A", "B", "LD", "LU", "LU_data"):
        return T(3, 3)
    if name in ("batch1", "batch2"):
        return T(2, 3, 3)
    if name in ("sorted_sequence", "boundaries"):
        return T(*shape, kind="sorted") if name == "sorted_sequence" else T(4, kind="sorted")
    if name in ("pivots", "LU_pivots"):
        return I(3, low=1, high=2, dtype="int32")
    if name in ("lengths", "target_lengths", "input_lengths", "offsets", "batch_sizes", "counts", "repeats"):
        return I(n0, low=1, high=2)
    del n0
    return T(*shape)


def generic_value(t: str, name: str, cfg: str) -> Any:
    """A value spec for a required parameter of schema type ``t`` named ``name`` (or SKIP)."""
    shape = CONFIGS[cfg]
    base = t.rstrip("?")
    if base == "Tensor":
        return _tensor_value(name, shape)
    if base.startswith("Tensor") and "[" in base:
        if name == "indices":
            return Lst(I(*shape[:1], high=shape[0] if shape else 1))
        return Lst(T(*shape), T(*shape))
    if base == "bool":
        return name in ("train", "training")
    if base in ("int", "SymInt"):
        return _int_value(name, shape)
    if base in ("float", "double"):
        return _float_value(name)
    if base == "Scalar":
        return _scalar_value(name)
    if "[" in base and ("int" in base.lower()):
        return _intlist_value(name, base, shape)
    if base.startswith("float[") or base.startswith("Scalar["):
        return (1.0,)
    if base == "ScalarType":
        return Dt("float32")
    if base == "str":
        return {"reduce": "sum", "indexing": "ij", "ord": "fro", "equation": "ij->ji",
                "mode": "reflect", "padding_mode": "zeros", "approximate": "none"}.get(name, SKIP)
    if base == "Generator":
        return None
    return SKIP
