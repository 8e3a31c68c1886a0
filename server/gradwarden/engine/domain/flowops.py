"""Shape rules of the torch calls the flow checks need (engine/domain/flowshape.py holds the algebra).

Each rule takes the call's arguments as plain Python values — ints, tuples, strings, ``None``
— with tensors replaced by ``T(shape)``, and returns the output's shape or ``None`` (unknown).
Only calls whose output shape follows from their documented semantics are listed; anything
else is unknown, which keeps the non-scalar check silent.
"""
from __future__ import annotations

import math

from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.domain.flowshape import ELL, Shape


class T:
    """A tensor argument (its shape, possibly unknown)."""

    __slots__ = ("shape",)

    def __init__(self, shape: Shape) -> None:
        self.shape = shape


UNK = object()  # an argument whose value we do not know

POINTWISE = frozenset("""
add sub mul div true_divide floor_divide remainder pow atan2 maximum minimum fmod hypot lerp where
masked_fill clamp clip clamp_min clamp_max neg negative abs absolute exp exp2 expm1 log log2 log10 log1p
sqrt rsqrt sigmoid tanh relu relu6 gelu silu mish elu selu celu leaky_relu softplus softsign hardtanh
hardsigmoid hardswish logsigmoid tanhshrink softshrink hardshrink sin cos tan asin acos atan sinh cosh
square reciprocal sign sgn floor ceil round trunc frac erf erfc erfinv nan_to_num dropout alpha_dropout
feature_alpha_dropout dropout1d dropout2d dropout3d clone contiguous float double half bfloat16 to cuda cpu
type_as detach softmax log_softmax softmin normalize layer_norm group_norm batch_norm instance_norm
local_response_norm __radd__ __rsub__ __rmul__ __rtruediv__ __rpow__ __rfloordiv__ __rmod__ eq ne lt le gt
ge isnan isinf isfinite logical_not logical_and logical_or logical_xor bitwise_not bitwise_and bitwise_or
bitwise_xor threshold rrelu logit xlogy addcmul addcdiv rad2deg deg2rad positive requires_grad_ retain_grad
float_power copysign nextafter heaviside logaddexp logaddexp2 sinc frexp i0 lgamma digamma polygamma
""".split())
REDUCTIONS = frozenset("sum mean prod std var nansum nanmean amax amin logsumexp all any count_nonzero argmax argmin".split())
# reductions that return (values, indices) when given a dim and one tensor when not
REDUCE_OR_PAIR = frozenset("max min median nanmedian mode".split())
# calls that return a (values, indices) pair (with a dim, for the ones above)
PAIR_METHODS = REDUCE_OR_PAIR | frozenset("kthvalue sort topk cummax cummin".split())
ELEMENTWISE_LOSSES = frozenset("""
mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy binary_cross_entropy_with_logits kl_div
soft_margin_loss poisson_nll_loss
""".split())
CLASS_LOSSES = frozenset("cross_entropy nll_loss".split())
LOSS_MODULES = {"MSELoss": "mse_loss", "L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss",
                "HuberLoss": "huber_loss", "BCELoss": "binary_cross_entropy",
                "BCEWithLogitsLoss": "binary_cross_entropy_with_logits", "KLDivLoss": "kl_div",
                "SoftMarginLoss": "soft_margin_loss", "PoissonNLLLoss": "poisson_nll_loss",
                "CrossEntropyLoss": "cross_entropy", "NLLLoss": "nll_loss"}
SAME_SHAPE_MODULES = frozenset("""
ReLU ReLU6 LeakyReLU PReLU RReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Hardtanh
Hardsigmoid Hardswish LogSigmoid Tanhshrink Softshrink Hardshrink Threshold Softmax LogSoftmax Softmin
Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout Identity BatchNorm1d BatchNorm2d
BatchNorm3d LayerNorm GroupNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d LocalResponseNorm RMSNorm
""".split())
FACTORIES = frozenset("randn rand zeros ones empty full randint normal_like".split())
LIKE = frozenset("zeros_like ones_like empty_like rand_like randn_like full_like randint_like".split())


def _shape_of(x: Any) -> Shape:
    return x.shape if isinstance(x, T) else None


def _sizes(args: Sequence[Any]) -> Optional[List[Optional[int]]]:
    """``f(2, 3)`` / ``f((2, 3))`` / ``f([2, 3])`` size arguments."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = list(args[0])
    if not args:
        return None
    out: List[Optional[int]] = []
    for a in args:
        if isinstance(a, bool) or isinstance(a, T):
            return None
        out.append(a if isinstance(a, int) else None)
    return out


def _int(x: Any) -> Optional[int]:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _dims(x: Any) -> Optional[List[int]]:
    if isinstance(x, int) and not isinstance(x, bool):
        return [x]
    if isinstance(x, (tuple, list)) and x and all(isinstance(d, int) and not isinstance(d, bool) for d in x):
        return list(x)
    return None


def _literal_shape(v: Any) -> Shape:
    """Shape of ``torch.tensor(<python literal>)``."""
    if isinstance(v, (int, float, bool)):
        return ()
    if isinstance(v, (tuple, list)):
        if not v:
            return (0,)
        inner = [_literal_shape(x) for x in v]
        if any(s is None for s in inner) or len(set(inner)) != 1:
            return (len(v),) if all(s is not None for s in inner) else None
        return (len(v),) + inner[0]  # type: ignore[operator]
    return None


def _reduction(kwargs: Dict[str, Any], positional: Optional[Any] = None) -> Any:
    red = kwargs.get("reduction", positional if positional is not None else "mean")
    if kwargs.get("reduce") is False:
        return "none"
    return red


def loss_shape(loss: str, inp: Shape, target: Shape, reduction: Any) -> Shape:
    if reduction in ("mean", "sum"):
        return ()
    if reduction != "none":
        return None
    if loss in ELEMENTWISE_LOSSES:
        return fs.broadcast([inp, target])
    if loss in CLASS_LOSSES:
        if inp is not None and ELL not in inp and len(inp) >= 2 and target is not None and ELL not in target:
            if len(target) == len(inp):  # class probabilities
                return fs.reduce(inp, [1], False)
            return target
        if target is not None and ELL not in target and inp is None:
            return None
        return None
    return None


def method_shape(name: str, self_shape: Shape, args: Sequence[Any], kwargs: Dict[str, Any]) -> Shape:
    """Shape of ``x.name(*args, **kwargs)`` where x has ``self_shape``."""
    if name in POINTWISE:
        shapes = [self_shape] + [a.shape for a in list(args) + list(kwargs.values()) if isinstance(a, T)]
        if name in ("softmax", "log_softmax", "softmin", "normalize", "layer_norm", "dropout"):
            shapes = [self_shape]
        return fs.broadcast(shapes)
    if name in REDUCTIONS or name in REDUCE_OR_PAIR or name == "norm":
        if name == "norm":
            dim = kwargs.get("dim", args[1] if len(args) > 1 else None)
            keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        else:
            dim = kwargs.get("dim", args[0] if args else None)
            keep = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
        if any(isinstance(a, T) for a in args):
            return None  # max(x, other): elementwise
        if dim is None:
            if name == "logsumexp":
                return None
            return () if keep is False else fs.reduce(self_shape, None, True)
        if name in REDUCE_OR_PAIR:
            return None  # a (values, indices) pair
        dims = _dims(dim)
        if dims is None or not isinstance(keep, bool):
            return None
        return fs.reduce(self_shape, dims, keep)
    if name in ("view", "reshape"):
        if len(args) == 1 and isinstance(args[0], T):
            return None  # view(dtype) / reshape(other): leave it
        sizes = _sizes(args)
        return None if sizes is None else fs.reshape(self_shape, sizes)
    if name in ("view_as", "reshape_as", "expand_as") and args and isinstance(args[0], T):
        return args[0].shape
    if name == "flatten":
        start = kwargs.get("start_dim", args[0] if args else 0)
        end = kwargs.get("end_dim", args[1] if len(args) > 1 else -1)
        if _int(start) is None or _int(end) is None:
            return None
        return fs.flatten(self_shape, start, end)
    if name == "ravel":
        n = fs.numel(self_shape)
        return (n,) if n is not None else None
    if name in ("gather", "take_along_dim"):
        # the result has the index's shape (gather(dim, index)); take_along_dim(indices, dim) too
        index = kwargs.get("index", kwargs.get("indices", args[1] if name == "gather" and len(args) > 1 else
                                                args[0] if name == "take_along_dim" and args else None))
        return index.shape if isinstance(index, T) else None
    if name in ("squeeze",):
        dim = kwargs.get("dim", args[0] if args else None)
        if dim is None:
            return fs.squeeze(self_shape, None)
        return fs.squeeze(self_shape, dim) if _int(dim) is not None else None
    if name == "unsqueeze":
        dim = kwargs.get("dim", args[0] if args else None)
        return fs.unsqueeze(self_shape, dim) if _int(dim) is not None else None
    if name in ("t", "T"):
        if self_shape is not None and ELL not in self_shape and len(self_shape) <= 2:
            return tuple(reversed(self_shape))
        return None
    if name in ("transpose", "swapaxes", "swapdims") and len(args) >= 2:
        a, b = _int(args[0]), _int(args[1])
        return None if a is None or b is None else fs.transpose(self_shape, a, b)
    if name in ("mT",):
        return fs.transpose(self_shape, -2, -1)
    if name == "permute":
        order = _sizes(args)
        return None if order is None or any(o is None for o in order) else fs.permute(self_shape, order)  # type: ignore[arg-type]
    if name in ("matmul", "mm", "bmm", "__matmul__"):
        return fs.matmul(self_shape, _shape_of(args[0])) if args else None
    if name == "__rmatmul__":
        return fs.matmul(_shape_of(args[0]), self_shape) if args else None
    if name in ("dot", "vdot"):
        return ()
    if name == "item":
        return None
    if name in ("new_zeros", "new_ones", "new_empty", "new_full"):
        sizes = _sizes(args[:1] if name == "new_full" else args)
        return None if sizes is None else tuple(sizes)
    if name == "expand":
        sizes = _sizes(args)
        if sizes is None:
            return None
        if self_shape is not None and ELL not in self_shape and len(sizes) >= len(self_shape):
            off = len(sizes) - len(self_shape)
            return tuple(self_shape[i - off] if s == -1 and i >= off else s for i, s in enumerate(sizes))
        return tuple(None if s == -1 else s for s in sizes)
    if name == "repeat":
        sizes = _sizes(args)
        if sizes is None or self_shape is None or ELL in self_shape or len(sizes) < len(self_shape):
            return None
        base = (1,) * (len(sizes) - len(self_shape)) + tuple(self_shape)
        return tuple(None if s is None or b is None else s * b for s, b in zip(sizes, base))  # type: ignore[operator]
    if name == "narrow" and len(args) >= 3:
        dim, length = _int(args[0]), _int(args[2])
        if dim is None or self_shape is None or ELL in self_shape:
            return None
        rank = len(self_shape)
        d = dim + rank if dim < 0 else dim
        if not 0 <= d < rank:
            return None
        dims = list(self_shape)
        dims[d] = length
        return tuple(dims)
    if name == "select" and len(args) >= 2:
        dim = _int(args[0])
        if dim is None or self_shape is None or ELL in self_shape:
            return None
        rank = len(self_shape)
        d = dim + rank if dim < 0 else dim
        return self_shape[:d] + self_shape[d + 1:] if 0 <= d < rank else None
    return None


def function_shape(short: str, args: Sequence[Any], kwargs: Dict[str, Any], functional: bool) -> Shape:
    """Shape of ``torch.short(...)`` / ``F.short(...)``."""
    if short in ("tensor", "as_tensor") and args and not isinstance(args[0], T):
        return _literal_shape(args[0])
    if short in FACTORIES:
        if short == "full":
            sizes = _sizes(args[:1]) if args else _sizes([kwargs.get("size")])
        elif short == "randint":
            size = kwargs.get("size", next((a for a in args if isinstance(a, (tuple, list))), None))
            sizes = _sizes([size]) if size is not None else None
        else:
            size = kwargs.get("size")
            sizes = _sizes([size]) if size is not None else _sizes(args)
        return None if sizes is None else tuple(sizes)
    if short in LIKE:
        return _shape_of(args[0]) if args else None
    if short == "arange":
        nums = [a for a in args if not isinstance(a, T)]
        if nums and all(isinstance(a, int) and not isinstance(a, bool) for a in nums):
            try:
                return (len(range(*nums)),)
            except (TypeError, ValueError):
                return None
        if 1 <= len(nums) <= 3 and all(isinstance(a, (int, float)) and not isinstance(a, bool) for a in nums):
            start, end, step = (0.0, nums[0], 1.0) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) == 3 else 1.0)
            if step == 0:
                return None
            return (max(0, math.ceil((end - start) / step)),)  # torch: ceil((end - start) / step) elements
        return None
    if short == "linspace":
        steps = kwargs.get("steps", args[2] if len(args) > 2 else None)
        return (steps,) if _int(steps) is not None else None
    if short == "eye":
        n = _int(args[0]) if args else None
        m = _int(args[1]) if len(args) > 1 else n
        return (n, m) if n is not None else None
    if short in ELEMENTWISE_LOSSES or short in CLASS_LOSSES:
        if len(args) < 2:
            return None
        pos = {"mse_loss": 4, "l1_loss": 4, "smooth_l1_loss": 4, "binary_cross_entropy": 5,
               "binary_cross_entropy_with_logits": 5, "kl_div": 4, "cross_entropy": 5, "nll_loss": 5}.get(short)
        positional = args[pos] if pos is not None and len(args) > pos else None
        return loss_shape(short, _shape_of(args[0]), _shape_of(args[1]), _reduction(kwargs, positional))
    if short in ("stack",) and args:
        seq = args[0]
        dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
        if isinstance(seq, (tuple, list)) and seq and all(isinstance(x, T) for x in seq) and _int(dim) is not None:
            return fs.stack([x.shape for x in seq], dim)
        return None
    if short in ("cat", "concat", "concatenate") and args:
        seq = args[0]
        dim = kwargs.get("dim", args[1] if len(args) > 1 else 0)
        if isinstance(seq, (tuple, list)) and seq and all(isinstance(x, T) for x in seq) and _int(dim) is not None:
            return fs.cat([x.shape for x in seq], dim)
        return None
    if short == "linear" and len(args) >= 2:
        w = _shape_of(args[1])
        if w is None or ELL in w or len(w) != 2:
            return None
        return fs.matmul(_shape_of(args[0]), (w[1], w[0]))
    if short in ("matmul", "mm", "bmm") and len(args) >= 2:
        return fs.matmul(_shape_of(args[0]), _shape_of(args[1]))
    if short in ("dot", "vdot", "trace"):
        return ()
    if short == "outer" and len(args) >= 2:
        a, b = _shape_of(args[0]), _shape_of(args[1])
        if a is not None and b is not None and len(a) == 1 and len(b) == 1 and ELL not in a + b:
            return (a[0], b[0])
        return None
    if short in ("interpolate", "upsample") and args and isinstance(args[0], T):
        x = args[0].shape
        got = _upsample_sizes(x, kwargs.get("size", args[1] if len(args) > 1 else None),
                              kwargs.get("scale_factor", args[2] if len(args) > 2 else None))
        return None if got is None else _spatial_out(x, got[0], got[1])
    if short.startswith("adaptive_") and short[-2:] in ("1d", "2d", "3d") and args and isinstance(args[0], T):
        n = int(short[-2])
        out = _tuple_of(kwargs.get("output_size", args[1] if len(args) > 1 else None), n)
        return _spatial_out(args[0].shape, n, out)
    if short == "where" and len(args) == 3:
        return fs.broadcast([_shape_of(a) if isinstance(a, T) else () for a in args])
    if short == "vector_norm" and args and isinstance(args[0], T):
        # torch.linalg.vector_norm(x, ord, dim, keepdim): the positions of x.norm(p, dim, keepdim)
        return method_shape("norm", args[0].shape, list(args[1:]), kwargs)
    if args and isinstance(args[0], T):
        # torch.f(x, ...) behaves like x.f(...) for the methods we know
        return method_shape(short, args[0].shape, list(args[1:]), kwargs)
    return None


def pair_shape(name: str, self_shape: Shape, args: Sequence[Any], kwargs: Dict[str, Any]) -> Shape:
    """Shape of each tensor of the ``(values, indices)`` pair ``x.name(...)`` returns (``max``/
    ``min``/``median``/``mode``/``kthvalue`` along a dim, ``sort``, ``topk``)."""
    if any(isinstance(a, T) for a in args):
        return None
    if name in REDUCE_OR_PAIR:
        dim = kwargs.get("dim", args[0] if args else None)
        keep = kwargs.get("keepdim", args[1] if len(args) > 1 else False)
        dims = _dims(dim)
        if dims is None or len(dims) != 1 or not isinstance(keep, bool):
            return None
        return fs.reduce(self_shape, dims, keep)
    if name == "kthvalue":
        dim = kwargs.get("dim", args[1] if len(args) > 1 else -1)
        keep = kwargs.get("keepdim", args[2] if len(args) > 2 else False)
        return fs.reduce(self_shape, [dim], keep) if _int(dim) is not None and isinstance(keep, bool) else None
    if name in ("sort", "cummax", "cummin"):
        return self_shape
    if name == "topk":
        k = _int(kwargs.get("k", args[0] if args else None))
        dim = _int(kwargs.get("dim", args[1] if len(args) > 1 else -1))
        if k is None or dim is None or self_shape is None or ELL in self_shape:
            return None
        return _with_dim(self_shape, dim, k)
    return None


PART_METHODS = frozenset({"chunk", "split", "unbind"})


def parts_shapes(name: str, self_shape: Shape, args: Sequence[Any], kwargs: Dict[str, Any],
                 count: Optional[int]) -> Optional[List[Shape]]:
    """Shapes of the ``count`` tensors ``x.chunk(n, dim)``, ``x.split(size, dim)`` or ``x.unbind(dim)``
    returns, when the split dim's size is known (counted from the end when leading dims are not);
    ``count`` None: as many as there are."""
    if self_shape is None or any(isinstance(a, T) for a in args):
        return None
    if name == "unbind":
        dim = _int(kwargs.get("dim", args[0] if args else 0))
        if dim is None:
            return None
        return [fs.reduce(self_shape, [dim], False)] * (count or 1)
    dim = _int(kwargs.get("dim", args[1] if len(args) > 1 else 0))
    first = args[0] if args else kwargs.get("chunks" if name == "chunk" else "split_size_or_sections")
    if dim is None or _int(first) is None or first <= 0:
        return None
    rank = len(self_shape)
    if ELL in self_shape:
        if dim >= 0 or self_shape[0] is not ELL or -dim > rank - 1:
            return None
    elif not -rank <= dim < rank:
        return None
    size = self_shape[dim]
    if not isinstance(size, int):
        return None
    piece = -(-size // first) if name == "chunk" else first  # chunk: ceil(size / n) each, the last the rest
    sizes = []
    left = size
    while left > 0:
        sizes.append(min(piece, left))
        left -= piece
    if count is not None and len(sizes) != count:
        return None
    out: List[Shape] = []
    for n in sizes:
        dims = list(self_shape)
        dims[dim] = n
        out.append(tuple(dims))
    return out


def _with_dim(shape: Shape, dim: int, n: Optional[int]) -> Shape:
    if shape is None or ELL in shape:
        return None
    rank = len(shape)
    d = dim + rank if dim < 0 else dim
    if not 0 <= d < rank:
        return None
    return shape[:d] + (n,) + shape[d + 1:]


def _tuple_of(v: Any, n: int) -> Optional[Tuple[Any, ...]]:
    """A size/kernel/stride argument as ``n`` values (an int repeats; a tuple must have n)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (v,) * n
    if isinstance(v, (tuple, list)) and len(v) == n:
        return tuple(v)
    return None


def _spatial_out(x: Shape, n: int, sizes: Optional[Sequence[Any]]) -> Shape:
    """An op that keeps the batch and channel dims of an ``n``-d input ``(N, C, *spatial)``
    (or ``(C, *spatial)``) and makes the spatial dims ``sizes`` (None: unknown)."""
    spatial = tuple(s if isinstance(s, int) and not isinstance(s, bool) else None for s in sizes) \
        if sizes is not None else (None,) * n
    if x is None:
        return None
    if ELL in x:
        sp = fs._split(x)
        if sp is None or len(sp[1]) < n + 1:
            return (ELL,) + (None,) + spatial if sp is not None else None
        return (ELL,) + tuple(sp[1][:-n]) + spatial
    if len(x) not in (n + 1, n + 2):
        return None
    return tuple(x[:-n]) + spatial


def _conv_sizes(x: Shape, n: int, kernel: Any, stride: Any, padding: Any, dilation: Any,
                transposed: bool = False, output_padding: Any = 0) -> Optional[List[Optional[int]]]:
    """Spatial output sizes of a convolution or pooling window (torch's formula), per dim."""
    if x is None or ELL in x or len(x) not in (n + 1, n + 2):
        return None
    k, s, d = _tuple_of(kernel, n), _tuple_of(stride, n), _tuple_of(dilation, n)
    p = _tuple_of(padding, n) if not isinstance(padding, str) else None
    op = _tuple_of(output_padding, n)
    out: List[Optional[int]] = []
    for i, size in enumerate(x[-n:]):
        if size is None or k is None or s is None or d is None or p is None or op is None or \
                not all(isinstance(v, int) and not isinstance(v, bool) for v in (k[i], s[i], d[i], p[i], op[i])):
            out.append(None)
        elif transposed:
            out.append((size - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1)
        else:
            v = (size + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 if s[i] else None
            out.append(v if v is not None and v > 0 else None)
    return out


def _upsample_sizes(x: Shape, size: Any, scale: Any) -> Optional[Tuple[int, Optional[List[Optional[int]]]]]:
    """(spatial rank, spatial output sizes) of ``interpolate``/``Upsample``."""
    if x is None or ELL in x or len(x) < 3:
        return None
    n = len(x) - 2
    if size is not None and size is not UNK:
        sz = _tuple_of(size, n)
        return (n, list(sz)) if sz is not None else (n, None)
    sc = _tuple_of(scale, n)
    if sc is None:
        return n, None
    return n, [int(math.floor(d * f)) if isinstance(d, int) and isinstance(f, (int, float)) and not isinstance(f, bool)
               else None for d, f in zip(x[2:], sc)]


_POOL_DIMS = {"MaxPool1d": 1, "MaxPool2d": 2, "MaxPool3d": 3, "AvgPool1d": 1, "AvgPool2d": 2, "AvgPool3d": 3,
              "LPPool1d": 1, "LPPool2d": 2}
_ADAPTIVE_DIMS = {"AdaptiveAvgPool1d": 1, "AdaptiveAvgPool2d": 2, "AdaptiveAvgPool3d": 3,
                  "AdaptiveMaxPool1d": 1, "AdaptiveMaxPool2d": 2, "AdaptiveMaxPool3d": 3}


def module_shape(short: str, ctor_args: Sequence[Any], ctor_kwargs: Dict[str, Any], args: Sequence[Any],
                 kwargs: Dict[str, Any]) -> Shape:
    """Shape of ``module(*args)`` for a torch module built with ``ctor_args``/``ctor_kwargs``."""
    x = _shape_of(args[0]) if args else None
    if short in SAME_SHAPE_MODULES:
        return x
    if short in ("Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"):
        got = _upsample_sizes(x, ctor_kwargs.get("size", ctor_args[0] if ctor_args else None),
                              ctor_kwargs.get("scale_factor", ctor_args[1] if len(ctor_args) > 1 else None))
        return None if got is None else _spatial_out(x, got[0], got[1])
    if short in _ADAPTIVE_DIMS:
        n = _ADAPTIVE_DIMS[short]
        out = _tuple_of(ctor_kwargs.get("output_size", ctor_args[0] if ctor_args else None), n)
        if out is not None and x is not None and ELL not in x and len(x) in (n + 1, n + 2):
            out = tuple(o if o is not None else x[len(x) - n + i] for i, o in enumerate(out))
        return _spatial_out(x, n, out)
    if short in _POOL_DIMS:
        n = _POOL_DIMS[short]
        kernel = ctor_kwargs.get("kernel_size", ctor_args[0] if ctor_args else None)
        stride = ctor_kwargs.get("stride", ctor_args[1] if len(ctor_args) > 1 else None)
        padding = ctor_kwargs.get("padding", ctor_args[2] if len(ctor_args) > 2 else 0)
        dilation = ctor_kwargs.get("dilation", 1) if short.startswith("Max") else 1
        if ctor_kwargs.get("ceil_mode") or short.startswith("LP"):
            return _spatial_out(x, n, None)
        return _spatial_out(x, n, _conv_sizes(x, n, kernel, kernel if stride is None else stride, padding, dilation))
    if short == "Linear":
        out = ctor_kwargs.get("out_features", ctor_args[1] if len(ctor_args) > 1 else None)
        if _int(out) is None:
            return None
        if x is not None and ELL not in x and x:
            return x[:-1] + (out,)
        return (ELL, out)
    if short in ("Conv1d", "Conv2d", "Conv3d"):
        out = ctor_kwargs.get("out_channels", ctor_args[1] if len(ctor_args) > 1 else None)
        n = int(short[4])
        if _int(out) is None:
            return None
        if x is not None and ELL not in x and len(x) in (n + 1, n + 2):
            kernel = ctor_kwargs.get("kernel_size", ctor_args[2] if len(ctor_args) > 2 else None)
            stride = ctor_kwargs.get("stride", ctor_args[3] if len(ctor_args) > 3 else 1)
            padding = ctor_kwargs.get("padding", ctor_args[4] if len(ctor_args) > 4 else 0)
            dilation = ctor_kwargs.get("dilation", ctor_args[5] if len(ctor_args) > 5 else 1)
            if padding == "same":
                sizes: Optional[List[Optional[int]]] = list(x[-n:])
            else:
                sizes = _conv_sizes(x, n, kernel, stride, padding, dilation)
            spatial = tuple(sizes) if sizes is not None else (None,) * n
            return tuple(x[:-n - 1]) + (out,) + spatial
        return (ELL, out) + (None,) * n
    if short in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        out = ctor_kwargs.get("out_channels", ctor_args[1] if len(ctor_args) > 1 else None)
        n = int(short[13])
        if _int(out) is None:
            return None
        if x is not None and ELL not in x and len(x) in (n + 1, n + 2):
            sizes = _conv_sizes(x, n, ctor_kwargs.get("kernel_size", ctor_args[2] if len(ctor_args) > 2 else None),
                                ctor_kwargs.get("stride", ctor_args[3] if len(ctor_args) > 3 else 1),
                                ctor_kwargs.get("padding", ctor_args[4] if len(ctor_args) > 4 else 0),
                                ctor_kwargs.get("dilation", 1), transposed=True,
                                output_padding=ctor_kwargs.get("output_padding", ctor_args[5] if len(ctor_args) > 5 else 0))
            spatial = tuple(sizes) if sizes is not None else (None,) * n
            return tuple(x[:-n - 1]) + (out,) + spatial
        return (ELL, out) + (None,) * n
    if short == "Embedding":
        dim = ctor_kwargs.get("embedding_dim", ctor_args[1] if len(ctor_args) > 1 else None)
        if _int(dim) is None:
            return None
        if x is not None and ELL not in x:
            return tuple(x) + (dim,)
        return (ELL, dim)
    if short == "Flatten":
        start = ctor_kwargs.get("start_dim", ctor_args[0] if ctor_args else 1)
        end = ctor_kwargs.get("end_dim", ctor_args[1] if len(ctor_args) > 1 else -1)
        return fs.flatten(x, start, end) if _int(start) is not None and _int(end) is not None else None
    if short in LOSS_MODULES and len(args) >= 2:
        red = _reduction(ctor_kwargs)
        return loss_shape(LOSS_MODULES[short], x, _shape_of(args[1]), red)
    return None
