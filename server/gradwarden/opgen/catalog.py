"""Call templates: generated from the Python signatures of torch builtins, plus a curated list
for Python-level functions (``torch.nn.functional``, ``torch.einsum``...), the ops whose generic
template does not run (convolutions, pooling, losses...), properties and dunder methods, and
``nn`` modules.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable

from gradwarden.opgen.spec import Param
from gradwarden.opgen.values import Bo, Dt, I, Lst, T

# ---------------------------------------------------------------------------------------------
# Handy specs

X = T(3, 3)
X3 = T(2, 3, 4)          # (N, C, L)
X4 = T(2, 3, 4, 4)       # (N, C, H, W)
X5 = T(1, 2, 3, 4, 4)    # (N, C, D, H, W)
V3 = T(3)
W33 = T(3, 3)


# ---------------------------------------------------------------------------------------------
# Parameter lists of Python callables


def _ann_kind(ann: Any, default: Any) -> str:
    s = ann if isinstance(ann, str) else (getattr(ann, "__name__", None) if isinstance(ann, type) else str(ann))
    s = s or ""
    if s is inspect.Parameter.empty or s == "<class 'inspect._empty'>" or s == "_empty":
        s = ""
    if "Tensor" in s and any(w in s for w in ("list", "List", "tuple", "Tuple", "Sequence")):
        return "L"
    if "Tensor" in s:
        return "T"
    if s and ("list[int]" in s or "List[int]" in s or "BroadcastingList" in s or "tuple[int" in s
              or "Tuple[int" in s or "_size" in s):
        return "S"
    if s in ("bool", "bool | None", "Optional[bool]", "typing.Optional[bool]"):
        return "B"
    if s and all(part.strip() in ("int", "float", "None", "Number", "SymInt") for part in s.replace("Optional[", "").replace("]", "").split("|")):
        return "N"
    if s:
        return "O"
    if isinstance(default, bool):
        return "B"
    if isinstance(default, (int, float)):
        return "N"
    return "O"


def py_params(fn: Callable, *, method: bool = False) -> tuple[Param, ...]:
    sig = inspect.signature(fn)
    out: list[Param] = []
    ps = list(sig.parameters.values())
    if method and ps and ps[0].name == "self":
        ps = ps[1:]
    for p in ps:
        if p.kind == p.VAR_KEYWORD:
            continue
        if p.name.startswith("_"):
            continue
        kind = _ann_kind(p.annotation, p.default)
        if p.kind == p.VAR_POSITIONAL:
            out.append(Param(p.name, kind if kind != "O" else "T", False, False, True))
            continue
        out.append(Param(p.name, kind, p.default is not p.empty, p.kind == p.KEYWORD_ONLY, False))
    return tuple(out)


def parse_params(spec: str) -> tuple[Param, ...]:
    """Inverse of spec.encode_params (for hand-written parameter lists)."""
    out = []
    for part in filter(None, spec.split(",")):
        kwonly = part.startswith("*")
        part = part.lstrip("*")
        varargs = part.endswith("+")
        part = part.rstrip("+")
        optional = part.endswith("?")
        part = part.rstrip("?")
        name, kind = part.split(":")
        out.append(Param(name, kind, optional, kwonly, varargs))
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Curated call templates: qualname -> list of (args, kwargs)
# For methods, args start with self.

C = dict  # kwargs shorthand

SIMPLE_ACT = ["relu", "relu6", "elu", "selu", "celu", "leaky_relu", "gelu", "silu", "mish", "hardtanh",
              "hardswish", "hardsigmoid", "softplus", "softsign", "tanhshrink", "softshrink", "hardshrink",
              "logsigmoid", "sigmoid", "tanh", "rrelu"]
INPLACE_ACT = ["relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish", "silu", "mish",
               "rrelu", "hardsigmoid"]

FUNCTIONS: dict[str, list[tuple[tuple, dict]]] = {}


def _f(name: str, *args: Any, **kwargs: Any) -> None:
    FUNCTIONS.setdefault(name, []).append((args, kwargs))


def _curate_functions() -> None:
    F = "torch.nn.functional."
    sx = T(3, 3, kind="sym")
    for a in SIMPLE_ACT:
        _f(F + a, sx)
    for a in INPLACE_ACT:
        _f(F + a, sx, inplace=True)
    _f(F + "threshold", sx, 0.5, 0.0)
    _f(F + "threshold", sx, 0.5, 0.0, inplace=True)
    _f(F + "glu", T(2, 4))
    for a in ("softmax", "log_softmax", "softmin"):
        _f(F + a, X, dim=-1)
    _f(F + "gumbel_softmax", X)
    _f(F + "normalize", X)
    _f(F + "normalize", X, dim=0)
    _f(F + "linear", T(2, 4), T(3, 4), T(3))
    _f(F + "linear", T(2, 4), T(3, 4))
    _f(F + "linear", T(2, 2, 4), T(3, 4), T(3))
    _f(F + "bilinear", T(2, 3), T(2, 4), T(5, 3, 4), T(5))
    # convolutions (torch.conv* is the same callable as F.conv*)
    _f("torch.conv1d", X3, T(4, 3, 3), T(4))
    _f("torch.conv1d", X3, T(4, 3, 3))
    _f("torch.conv2d", X4, T(4, 3, 3, 3), T(4))
    _f("torch.conv2d", X4, T(4, 3, 3, 3))
    _f("torch.conv3d", X5, T(3, 2, 3, 3, 3), T(3))
    _f("torch.conv_transpose1d", X3, T(3, 4, 3), T(4))
    _f("torch.conv_transpose2d", X4, T(3, 4, 3, 3), T(4))
    _f("torch.conv_transpose3d", X5, T(2, 3, 3, 3, 3), T(3))
    _f("torch.convolution", X4, T(4, 3, 3, 3), T(4), (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    _f("torch.conv_tbc", T(4, 2, 3), T(3, 3, 5), T(5), 1)
    # pooling
    _f(F + "max_pool1d", X3, 2)
    _f(F + "max_pool1d", X3, 2, return_indices=True)
    _f(F + "max_pool2d", X4, 2)
    _f(F + "max_pool2d", X4, 2, return_indices=True)
    _f(F + "max_pool3d", X5, 2)
    _f(F + "max_pool3d", X5, 2, return_indices=True)
    _f("torch.max_pool1d", X3, 2)
    _f("torch.max_pool2d", X4, 2)
    _f("torch.max_pool3d", X5, 2)
    _f("torch.max_pool1d_with_indices", X3, 2)
    _f(F + "max_pool2d_with_indices", X4, 2)
    _f("torch.avg_pool1d", X3, 2)
    _f(F + "avg_pool2d", X4, 2)
    _f(F + "avg_pool3d", X5, 2)
    _f("torch.adaptive_avg_pool1d", X3, 2)
    _f(F + "adaptive_avg_pool2d", X4, 2)
    _f(F + "adaptive_avg_pool3d", X5, 2)
    # output size 1 decomposes into a mean (saves nothing); recorded as a value-specific variant
    _f("torch.adaptive_avg_pool1d", X3, output_size=1)
    _f(F + "adaptive_avg_pool2d", X4, output_size=1)
    _f(F + "adaptive_avg_pool3d", X5, output_size=1)
    _f(F + "adaptive_max_pool1d", X3, 2)
    _f(F + "adaptive_max_pool2d", X4, 2)
    _f(F + "adaptive_max_pool2d", X4, 2, return_indices=True)
    _f(F + "adaptive_max_pool3d", X5, 2)
    _f("torch.adaptive_max_pool1d", X3, 2)
    _f(F + "lp_pool1d", X3, 2.0, 2)
    _f(F + "lp_pool2d", X4, 2.0, 2)
    _f(F + "fractional_max_pool2d", X4, 2, output_size=2)
    _f(F + "max_unpool2d", X4, I(2, 3, 4, 4, high=16), 2)
    # normalisation
    for tr in (True, False):
        _f(F + "batch_norm", X4, T(3), T(3), T(3), T(3), training=tr)
        _f("torch.batch_norm", X4, T(3), T(3), T(3), T(3), tr, 0.1, 1e-5, False)
        _f(F + "instance_norm", X4, T(3), T(3), T(3), T(3), use_input_stats=tr)
    _f(F + "batch_norm", X4, None, None, T(3), T(3), training=True)
    _f(F + "instance_norm", X4)
    _f(F + "layer_norm", T(2, 3, 4), (4,), T(4), T(4))
    _f(F + "layer_norm", T(2, 3, 4), (4,))
    _f("torch.layer_norm", T(2, 3, 4), (4,), T(4), T(4))
    _f(F + "group_norm", X4, 3, T(3), T(3))
    _f("torch.group_norm", X4, 3, T(3), T(3))
    _f(F + "rms_norm", T(2, 3, 4), (4,), T(4))
    _f("torch.rms_norm", T(2, 3, 4), (4,), T(4))
    _f(F + "local_response_norm", X4, 2)
    # dropout
    for a, x in (("dropout", X), ("alpha_dropout", X), ("feature_alpha_dropout", X4), ("dropout1d", X3),
                 ("dropout2d", X4), ("dropout3d", X5)):
        _f(F + a, x)
        _f(F + a, x, training=False)
        _f(F + a, x, inplace=True)
    _f("torch.dropout", X, 0.5, True)
    _f("torch.dropout", X, 0.5, False)
    _f("torch.dropout_", X, 0.5, True)
    _f("torch.alpha_dropout", X, 0.5, True)
    _f("torch.feature_dropout", X4, 0.5, True)
    # embeddings
    _f(F + "embedding", I(2, 3, high=5), T(5, 4))
    _f(F + "embedding", I(2, 3, high=5), T(5, 4), padding_idx=0)
    _f("torch.embedding", T(5, 4), I(2, 3, high=5))
    _f(F + "embedding_bag", I(2, 3, high=5), T(5, 4))
    _f(F + "embedding_bag", I(2, 3, high=5), T(5, 4), mode="sum")
    _f(F + "embedding_bag", I(2, 3, high=5), T(5, 4), mode="max")
    _f(F + "one_hot", I(4, high=3))
    _f(F + "one_hot", I(4, high=3), 3)
    # losses
    tgt_i = I(4, high=5)
    _f(F + "cross_entropy", T(4, 5), tgt_i)
    _f(F + "cross_entropy", T(4, 5), tgt_i, T(5))
    _f(F + "cross_entropy", T(4, 5), T(4, 5))
    _f(F + "cross_entropy", T(4, 5), tgt_i, label_smoothing=0.1)
    _f(F + "nll_loss", T(4, 5), tgt_i)
    _f(F + "nll_loss", T(4, 5), tgt_i, T(5))
    _f(F + "nll_loss", T(2, 5, 3, 3), I(2, 3, 3, high=5))
    for a in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss",
              "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
              "multilabel_soft_margin_loss"):
        _f(F + a, T(4, 5), T(4, 5))
    _f(F + "mse_loss", T(4, 5), T(4, 5), reduction="none")
    _f(F + "l1_loss", T(4, 5), T(4, 5), reduction="none")
    _f(F + "binary_cross_entropy", T(4, 5), T(4, 5), T(4, 5))
    _f(F + "binary_cross_entropy_with_logits", T(4, 5), T(4, 5), pos_weight=T(5))
    _f(F + "binary_cross_entropy_with_logits", T(4, 5), T(4, 5), T(4, 5))
    _f(F + "kl_div", T(4, 5), T(4, 5), reduction="batchmean")
    _f(F + "kl_div", T(4, 5), T(4, 5), log_target=True)
    _f(F + "gaussian_nll_loss", T(4, 5), T(4, 5), T(4, 5))
    _f(F + "cosine_embedding_loss", T(4, 5), T(4, 5), T(4))
    _f(F + "margin_ranking_loss", T(4), T(4), T(4))
    _f(F + "hinge_embedding_loss", T(4, 5), T(4, 5))
    _f(F + "multi_margin_loss", T(4, 5), tgt_i)
    _f(F + "multilabel_margin_loss", T(4, 5), I(4, 5, high=5))
    _f(F + "triplet_margin_loss", T(4, 5), T(4, 5), T(4, 5))
    _f(F + "triplet_margin_with_distance_loss", T(4, 5), T(4, 5), T(4, 5))
    _f(F + "ctc_loss", T(6, 2, 4), I(2, 3, low=1, high=4), (6, 6), (3, 3))
    _f("torch.cosine_similarity", T(4, 5), T(4, 5))
    _f("torch.pairwise_distance", T(4, 5), T(4, 5))
    _f("torch.pdist", T(4, 5))
    _f("torch.cdist", T(4, 5), T(3, 5))
    # shape / sampling
    _f(F + "pad", X4, (1, 1))
    _f(F + "pad", X4, (1, 1, 1, 1), mode="reflect")
    _f(F + "pad", X4, (1, 1, 1, 1), mode="replicate")
    _f(F + "interpolate", X4, scale_factor=2)
    _f(F + "interpolate", X4, scale_factor=2, mode="bilinear")
    _f(F + "interpolate", X4, size=(6, 6), mode="bicubic")
    _f(F + "interpolate", X3, scale_factor=2, mode="linear")
    _f(F + "upsample", X4, scale_factor=2)
    _f(F + "upsample_nearest", X4, scale_factor=2)
    _f(F + "upsample_bilinear", X4, scale_factor=2)
    _f(F + "grid_sample", X4, T(2, 3, 3, 2, kind="sym"), align_corners=False)
    _f(F + "affine_grid", T(2, 2, 3), (2, 3, 4, 4), align_corners=False)
    _f("torch.pixel_shuffle", T(1, 4, 2, 2), 2)
    _f("torch.pixel_unshuffle", T(1, 1, 4, 4), 2)
    _f("torch.channel_shuffle", T(1, 4, 2, 2), 2)
    _f(F + "unfold", X4, 2)
    _f(F + "fold", T(2, 12, 9), (4, 4), 2)
    _f(F + "scaled_dot_product_attention", T(2, 3, 4), T(2, 3, 4), T(2, 3, 4))
    _f(F + "scaled_dot_product_attention", T(2, 3, 4), T(2, 3, 4), T(2, 3, 4), is_causal=True)
    _f(F + "prelu", X4, T(1))
    _f("torch.prelu", X4, T(1))
    _f("torch.prelu", X4, T(3))
    # torch-level Python functions
    _f("torch.einsum", "ij,jk->ik", X, X)
    _f("torch.einsum", "ij,jk->ik", Lst(X, X))
    _f("torch.einsum", "ij->j", X)
    _f("torch.tensordot", X, X, 1)
    _f("torch.norm", X)
    _f("torch.norm", X, 2)
    _f("torch.norm", X, dim=1)
    _f("torch.norm", X, "fro")
    _f("torch.split", X, 1)
    _f("torch.split", X, [1, 2])
    _f("torch.broadcast_tensors", T(1, 3), T(3, 1))
    _f("torch.meshgrid", V3, V3, indexing="ij")
    _f("torch.block_diag", X, X)
    _f("torch.cartesian_prod", V3, V3)
    _f("torch.atleast_1d", X)
    _f("torch.atleast_2d", X)
    _f("torch.atleast_3d", X)
    _f("torch.atleast_1d", V3)
    _f("torch.chain_matmul", X, X, X)
    _f("torch.unique", X)
    _f("torch.unique_consecutive", X)
    _f("torch.unravel_index", I(3, high=9), (3, 3))
    _f("torch.nonzero", X)
    _f("torch.tensor", [1.0, 2.0])
    _f("torch.as_tensor", [1.0, 2.0])
    _f("torch.range", 0, 3)
    _f("torch.stft", T(16), 8, return_complex=True)
    # torch builtins with awkward arguments
    _f("torch.matmul", X, X)
    _f("torch.matmul", V3, V3)
    _f("torch.matmul", T(2, 3, 3), X)
    _f("torch.mm", X, X)
    _f("torch.bmm", T(2, 3, 3), T(2, 3, 3))
    _f("torch.mv", X, V3)
    _f("torch.dot", V3, V3)
    _f("torch.outer", V3, V3)
    _f("torch.addmm", X, X, X)
    _f("torch.addmm", V3, X, X)
    _f("torch.baddbmm", T(2, 3, 3), T(2, 3, 3), T(2, 3, 3))
    _f("torch.addbmm", X, T(2, 3, 3), T(2, 3, 3))
    _f("torch.addmv", V3, X, V3)
    _f("torch.addr", X, V3, V3)
    _f("torch.where", Bo(3, 3), X, X)
    _f("torch.where", Bo(3, 3), X, 0.0)
    _f("torch.where", Bo(3, 3))
    _f("torch.masked_select", X, Bo(3, 3))
    _f("torch.index_select", X, 0, I(2, high=3))
    _f("torch.gather", X, 1, I(3, 2, high=3))
    _f("torch.take", X, I(2, high=9))
    _f("torch.take_along_dim", X, I(3, 2, high=3), 1)
    _f("torch.scatter", X, 1, I(3, 2, high=3), X)
    _f("torch.scatter", X, 1, I(3, 2, high=3), 1.0)
    _f("torch.scatter_add", X, 1, I(3, 2, high=3), X)
    _f("torch.scatter_reduce", X, 1, I(3, 2, high=3), X, "sum")
    _f("torch.scatter_reduce", X, 1, I(3, 2, high=3), X, "amax")
    _f("torch.index_add", X, 0, I(2, high=3), T(2, 3))
    _f("torch.index_copy", X, 0, I(2, high=3), T(2, 3))
    _f("torch.index_fill", X, 0, I(2, high=3), 1.0)
    _f("torch.index_put", X, Lst(I(2, high=3)), T(2, 3))
    _f("torch.masked_fill", X, Bo(3, 3), 1.0)
    _f("torch.masked_scatter", X, Bo(3, 3), X)
    _f("torch.embedding_bag", T(5, 4), I(6, high=5), I(2, high=1))
    _f("torch.cross_entropy_loss", T(4, 5), I(4, high=5))
    _f("torch.cat", Lst(X, X))
    _f("torch.cat", Lst(X, X), 1)
    _f("torch.concat", Lst(X, X))
    _f("torch.concatenate", Lst(X, X))
    _f("torch.stack", Lst(X, X))
    _f("torch.hstack", Lst(X, X))
    _f("torch.vstack", Lst(X, X))
    _f("torch.dstack", Lst(X, X))
    _f("torch.column_stack", Lst(X, X))
    _f("torch.row_stack", Lst(X, X))
    _f("torch.clamp", X, 0.2, 0.8)
    _f("torch.clamp", X, 0.2)
    _f("torch.clamp", X, max=0.8)
    _f("torch.clamp", X, X, X)
    _f("torch.clamp", X, X)
    _f("torch.clip", X, 0.2, 0.8)
    _f("torch.clip", X, X, X)
    _f("torch.clamp_min", X, 0.2)
    _f("torch.clamp_max", X, 0.8)
    _f("torch.pow", X, 2)
    _f("torch.pow", X, X)
    _f("torch.pow", 2.0, X)
    _f("torch.lerp", X, X, 0.5)
    _f("torch.lerp", X, X, X)
    _f("torch.max", X)
    _f("torch.max", X, 1)
    _f("torch.max", X, X)
    _f("torch.min", X)
    _f("torch.min", X, 1)
    _f("torch.min", X, X)
    _f("torch.sort", X)
    _f("torch.topk", X, 2)
    _f("torch.kthvalue", X, 2)
    _f("torch.mode", X)
    _f("torch.median", X)
    _f("torch.median", X, 1)
    _f("torch.nanmedian", X)
    _f("torch.nanmedian", X, 1)
    _f("torch.cummax", X, 1)
    _f("torch.cummin", X, 1)
    _f("torch.sum", X)
    _f("torch.sum", X, 1)
    _f("torch.mean", X)
    _f("torch.mean", X, 1)
    _f("torch.std", X)
    _f("torch.std", X, 1)
    _f("torch.var", X)
    _f("torch.var", X, 1)
    _f("torch.var_mean", X)
    _f("torch.std_mean", X)
    _f("torch.prod", X)
    _f("torch.prod", X, 1)
    _f("torch.logsumexp", X, 1)
    _f("torch.amax", X)
    _f("torch.amax", X, 1)
    _f("torch.amin", X, 1)
    _f("torch.aminmax", X)
    _f("torch.cumsum", X, 1)
    _f("torch.cumprod", X, 1)
    _f("torch.logcumsumexp", X, 1)
    _f("torch.diff", X)
    _f("torch.trapezoid", X)
    _f("torch.cross", X, X)
    _f("torch.kron", X, X)
    _f("torch.inner", X, X)
    _f("torch.flip", X, (0,))
    _f("torch.roll", X, 1)
    _f("torch.rot90", X)
    _f("torch.tril", X)
    _f("torch.triu", X)
    _f("torch.diag", V3)
    _f("torch.diag", X)
    _f("torch.diag_embed", X)
    _f("torch.diagonal", X)
    _f("torch.trace", X)
    _f("torch.repeat_interleave", X, 2)
    _f("torch.repeat_interleave", I(3, high=3))
    _f("torch.squeeze", T(3, 1, 3))
    _f("torch.squeeze", T(3, 1, 3), 1)
    _f("torch.unsqueeze", X, 0)
    _f("torch.reshape", X, (9,))
    _f("torch.flatten", X)
    _f("torch.flatten", X4, 1)
    _f("torch.unflatten", T(3, 4), 1, (2, 2))
    _f("torch.ravel", X)
    _f("torch.t", X)
    _f("torch.transpose", X, 0, 1)
    _f("torch.swapaxes", X, 0, 1)
    _f("torch.swapdims", X, 0, 1)
    _f("torch.permute", X, (1, 0))
    _f("torch.movedim", X, 0, 1)
    _f("torch.moveaxis", X, 0, 1)
    _f("torch.narrow", X, 0, 0, 2)
    _f("torch.select", X, 0, 1)
    _f("torch.chunk", X, 3)
    _f("torch.tensor_split", X, 3)
    _f("torch.hsplit", X, 3)
    _f("torch.vsplit", X, 3)
    _f("torch.dsplit", T(2, 2, 4), 2)
    _f("torch.unbind", X)
    _f("torch.split_with_sizes", X, (1, 2))
    _f("torch.unsafe_split", X, 1)
    _f("torch.unsafe_chunk", X, 3)
    _f("torch.expand_copy", T(1, 3), (3, 3))
    _f("torch.broadcast_to", T(1, 3), (3, 3))
    _f("torch.detach", X)
    _f("torch.clone", X)
    _f("torch.zeros_like", X)
    _f("torch.ones_like", X)
    _f("torch.rand_like", X)
    _f("torch.randn_like", X)
    _f("torch.empty_like", X)
    _f("torch.full_like", X, 1.0)
    _f("torch.randint_like", X, 3)
    _f("torch.zeros", 3, 3)
    _f("torch.zeros", (3, 3))
    _f("torch.ones", 3, 3)
    _f("torch.empty", 3, 3)
    _f("torch.rand", 3, 3)
    _f("torch.randn", 3, 3)
    _f("torch.randint", 3, (3, 3))
    _f("torch.randperm", 3)
    _f("torch.full", (3, 3), 1.0)
    _f("torch.arange", 3)
    _f("torch.arange", 0, 3)
    _f("torch.linspace", 0, 1, 3)
    _f("torch.logspace", 0, 1, 3)
    _f("torch.eye", 3)
    _f("torch.multinomial", T(3), 2)
    _f("torch.bernoulli", X)
    _f("torch.normal", X, X)
    _f("torch.poisson", X)
    _f("torch.histc", X)
    _f("torch.bincount", I(5, high=3))
    _f("torch.bucketize", X, T(4, kind="sorted"))
    _f("torch.searchsorted", T(4, kind="sorted"), X)
    _f("torch.isin", X, X)
    _f("torch.allclose", X, X)
    _f("torch.equal", X, X)
    _f("torch.numel", X)
    _f("torch.is_tensor", X)
    _f("torch.is_floating_point", X)
    _f("torch.result_type", X, X)
    _f("torch.cov", X)
    _f("torch.corrcoef", X)
    _f("torch.cumulative_trapezoid", X)
    _f("torch.polar", X, X)
    _f("torch.complex", X, X)
    _f("torch.view_as_complex", T(3, 2))
    _f("torch.view_as_real", T(3, dtype="complex64"))
    _f("torch.real", T(3, dtype="complex64"))
    _f("torch.imag", T(3, dtype="complex64"))
    _f("torch.clamp_", X, 0.2, 0.8)
    _f("torch.clamp_", X, X, X)
    _f("torch.clip_", X, 0.2, 0.8)
    _f("torch.div", X, X, rounding_mode="floor")
    _f("torch.div", X, 2.0, rounding_mode="floor")
    _f("torch.movedim", X, (0,), (1,))
    _f("torch.lstm_cell", T(2, 4), Lst(T(2, 3), T(2, 3)), T(12, 4), T(12, 3), T(12), T(12))
    _f("torch.gru_cell", T(2, 4), T(2, 3), T(9, 4), T(9, 3), T(9), T(9))
    _f("torch.rnn_tanh_cell", T(2, 4), T(2, 3), T(3, 4), T(3, 3), T(3), T(3))
    _f("torch.rnn_relu_cell", T(2, 4), T(2, 3), T(3, 4), T(3, 3), T(3), T(3))
    # linalg
    L = "torch.linalg."
    spd = T(3, 3, kind="spd")
    for a in ("inv", "det", "slogdet", "eig", "eigvals", "svd", "svdvals", "qr", "matrix_norm", "norm",
              "pinv", "matrix_exp", "matrix_rank", "lu_factor", "lu", "inv_ex", "cond", "vector_norm",
              "eigh", "eigvalsh", "cholesky", "cholesky_ex", "ldl_factor", "ldl_factor_ex", "lu_factor_ex"):
        _f(L + a, spd)
    _f(L + "solve", spd, X)
    _f(L + "solve", spd, V3)
    _f(L + "solve_ex", spd, X)
    _f(L + "lstsq", spd, X)
    _f(L + "solve_triangular", spd, X, upper=True)
    _f(L + "matrix_power", X, 2)
    _f(L + "multi_dot", Lst(X, X, X))
    _f(L + "cross", X, X)
    _f(L + "vecdot", X, X)
    _f(L + "householder_product", X, V3)
    _f(L + "tensorinv", T(4, 2, 2), ind=1)
    _f(L + "tensorsolve", T(2, 3, 6), T(2, 3))
    _f(L + "vander", V3)
    _f(L + "diagonal", X)
    _f(L + "matmul", X, X)
    _f(L + "lu_solve", spd, I(3, low=1, high=2, dtype="int32"), X)
    _f("torch.cholesky", spd)
    _f("torch.cholesky_solve", X, spd)
    _f("torch.cholesky_inverse", spd)
    _f("torch.inverse", spd)
    _f("torch.det", spd)
    _f("torch.logdet", spd)
    _f("torch.slogdet", spd)
    _f("torch.pinverse", spd)
    _f("torch.svd", spd)
    _f("torch.qr", spd)
    _f("torch.triangular_solve", X, spd)
    _f("torch.matrix_exp", X)
    _f("torch.matrix_power", X, 2)
    _f("torch.lu_unpack", spd, I(3, low=1, high=2, dtype="int32"))
    _f("torch.lu_solve", X, spd, I(3, low=1, high=2, dtype="int32"))
    _f("torch.geqrf", X)
    _f("torch.ormqr", X, V3, X)
    _f("torch.orgqr", X, V3)
    _f("torch.special.logsumexp", X, 1)
    _f("torch.special.softmax", X, 1)
    _f("torch.special.log_softmax", X, 1)
    _f("torch.special.polygamma", 1, X)
    _f("torch.special.multigammaln", T(3, 3), 1)
    _f("torch.special.zeta", X, 2.0)
    _f("torch.special.xlogy", X, X)
    _f("torch.special.xlog1py", X, X)
    _f("torch.special.xlogy", X, 2.0)
    _f("torch.polygamma", 1, X)
    _f("torch.mvlgamma", X, 1)


_curate_functions()


# Methods: qualname "Tensor.<name>" -> (params spec, list of (args, kwargs)); args start with self.
METHODS: dict[str, list[tuple[str | None, tuple, dict]]] = {}


def _m(name: str, params: str | None, *args: Any, **kwargs: Any) -> None:
    METHODS.setdefault(name, []).append((params, args, kwargs))


# hand-written parameter lists for Python functions whose signature is (*args)
PARAMS = {"torch.einsum": "equation:O,operands:T+"}


def _curate_methods() -> None:
    binops = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift", "eq", "ne", "lt", "le", "gt", "ge", "div"]
    for op in binops:
        for pre in ("", "r", "i"):
            dn = f"__{pre}{op}__"
            if op in ("eq", "ne", "lt", "le", "gt", "ge") and pre:
                continue
            if op in ("and", "or", "xor", "lshift", "rshift"):
                _m(dn, "other:T", I(3, 3, high=4), I(3, 3, high=4))
                _m(dn, "other:T", I(3, 3, high=4), 1)
                continue
            _m(dn, "other:T", X, X)
            _m(dn, "other:T", X, 2.0)
            if op in ("pow", "mul", "div", "truediv") and not pre:
                _m(dn, "other:T", X, 2)
    for dn in ("__neg__", "__abs__", "__pos__"):
        _m(dn, "", X)
    _m("__invert__", "", I(3, 3, high=4))
    # indexing: the key kind decides the variant ("N" int, "O" slice/None/Ellipsis/tuple of
    # basic indices, "T" tensor (long or bool mask), "S" list of ints (advanced indexing))
    _m("__getitem__", "key:O", X, 0)
    _m("__getitem__", "key:O", X, slice(0, 2))
    _m("__getitem__", "key:O", X, (slice(None), 1))
    _m("__getitem__", "key:O", X, (Ellipsis, None))
    _m("__getitem__", "key:O", X, I(2, high=3))
    _m("__getitem__", "key:O", X, Bo(3, 3))
    _m("__getitem__", "key:O", X, [0, 2])
    _m("__setitem__", "key:O,value:O", X, 0, 1.0)
    _m("__setitem__", "key:O,value:O", X, slice(0, 2), 1.0)
    _m("__setitem__", "key:O,value:O", X, slice(0, 2), T(2, 3))
    _m("__setitem__", "key:O,value:O", X, I(2, high=3), 1.0)
    _m("__setitem__", "key:O,value:O", X, Bo(3, 3), 1.0)
    _m("__setitem__", "key:O,value:O", X, Bo(3, 3), T(5))
    for prop in ("T", "mT", "H", "mH"):
        _m(prop, "", X)
    _m("imag", "", T(3, dtype="complex64"))
    _m("real", "", T(3, dtype="complex64"))
    _m("clip", None, X, 0.2, 0.8)
    _m("clip", None, X, X, X)
    _m("clip_", None, X, 0.2, 0.8)
    _m("clip_", None, X, X, X)
    _m("div", None, X, X, rounding_mode="floor")
    _m("div_", None, X, X, rounding_mode="floor")
    _m("movedim", None, X, (0,), (1,))
    _m("movedim", None, X, 0, 1)
    _m("moveaxis", None, X, 0, 1)
    for conv in ("float", "double", "half", "bfloat16", "int", "long", "bool", "byte", "char", "short",
                 "cfloat", "cdouble", "cpu", "contiguous", "detach", "detach_", "clone", "requires_grad_",
                 "numpy", "tolist", "item", "nonzero", "unique", "unique_consecutive", "dim", "size",
                 "numel", "element_size", "ndimension", "nelement", "is_contiguous", "data_ptr",
                 "storage_offset", "stride", "get_device"):
        if conv in ("numpy",):
            continue
        _m(conv, "", X if conv not in ("item",) else T(1))
    _m("to", "dtype:O", X, Dt("float32"))
    _m("to", "dtype:O", X, Dt("float64"))
    _m("to", "dtype:O", X, "cpu")
    _m("to", "other:T,non_blocking:B?,copy:B?", X, X)
    _m("type", "dtype:O", X, Dt("float64"))
    _m("type", "dtype:O", X, "torch.FloatTensor")
    _m("type_as", None, X, X)
    _m("copy_", "src:T,non_blocking:B?", X, X)
    _m("new_tensor", "data:O", X, [1.0, 2.0])
    _m("norm", None, X)
    _m("norm", None, X, 2)
    _m("norm", None, X, dim=1)
    _m("split", None, X, 1)
    _m("split", None, X, [1, 2])
    _m("unflatten", None, T(3, 4), 1, (2, 2))
    _m("resize", None, X, 9)
    _m("resize_as", None, X, X)
    _m("view", None, X, (9,))
    _m("view", None, X, 9)
    _m("view", None, X, Dt("int32"))
    _m("reshape", None, X, (9,))
    _m("reshape", None, X, 9)
    _m("expand", None, T(1, 3), (3, 3))
    _m("expand", None, T(1, 3), 3, 3)
    _m("expand_as", None, T(1, 3), X)
    _m("repeat", None, X, (2, 2))
    _m("permute", None, X, (1, 0))
    _m("permute", None, X, 1, 0)
    _m("max", None, X)
    _m("max", None, X, 1)
    _m("max", None, X, X)
    _m("min", None, X)
    _m("min", None, X, 1)
    _m("min", None, X, X)
    _m("clamp", None, X, 0.2, 0.8)
    _m("clamp", None, X, X, X)
    _m("clamp_", None, X, 0.2, 0.8)
    _m("clamp_", None, X, X, X)
    _m("pow", None, X, 2)
    _m("pow", None, X, X)
    _m("pow_", None, X, 2)
    _m("pow_", None, X, X)
    _m("index_put_", None, X, Lst(I(2, high=3)), T(2, 3))
    _m("index_put", None, X, Lst(I(2, high=3)), T(2, 3))
    _m("masked_fill_", None, X, Bo(3, 3), 1.0)
    _m("masked_fill", None, X, Bo(3, 3), 1.0)
    _m("masked_fill", None, X, Bo(3, 3), T())
    _m("scatter_", None, X, 1, I(3, 2, high=3), X)
    _m("scatter_", None, X, 1, I(3, 2, high=3), 1.0)
    _m("scatter_add_", None, X, 1, I(3, 2, high=3), X)
    _m("index_add_", None, X, 0, I(2, high=3), T(2, 3))
    _m("index_copy_", None, X, 0, I(2, high=3), T(2, 3))
    _m("index_fill_", None, X, 0, I(2, high=3), 1.0)
    _m("masked_scatter_", None, X, Bo(3, 3), X)
    _m("fill_", None, X, 1.0)
    _m("zero_", None, X)
    _m("uniform_", None, X)
    _m("normal_", None, X)
    _m("bernoulli_", None, X)
    _m("exponential_", None, X)
    _m("random_", None, X)
    _m("add_", None, X, X)
    _m("add_", None, X, 1.0)
    _m("add_", None, X, X, alpha=2)
    _m("sub_", None, X, X)
    _m("sub_", None, X, 1.0)
    _m("mul_", None, X, X)
    _m("mul_", None, X, 2.0)
    _m("div_", None, X, X)
    _m("div_", None, X, 2.0)
    _m("addcmul_", None, X, X, X)
    _m("addcdiv_", None, X, X, X)
    _m("lerp_", None, X, X, 0.5)
    _m("lerp_", None, X, X, X)
    _m("set_", "source:T", X, X)
    _m("broadcast_to", None, T(1, 3), (3, 3))
    _m("reshape_as", None, X, T(9))
    _m("matmul", None, X, X)
    _m("mm", None, X, X)
    _m("bmm", None, T(2, 3, 3), T(2, 3, 3))
    _m("mv", None, X, V3)
    _m("dot", None, V3, V3)
    _m("gather", None, X, 1, I(3, 2, high=3))
    _m("index_select", None, X, 0, I(2, high=3))
    _m("masked_select", None, X, Bo(3, 3))
    _m("where", None, X, Bo(3, 3), X)
    _m("where", None, X, Bo(3, 3), 0.0)
    _m("squeeze", None, T(3, 1, 3))
    _m("squeeze", None, T(3, 1, 3), 1)
    _m("squeeze_", None, T(3, 1, 3))
    _m("unsqueeze_", None, X, 0)
    _m("t_", None, X)
    _m("transpose_", None, X, 0, 1)
    _m("as_strided", None, X, (2, 2), (1, 1))
    _m("unfold", None, X, 0, 2, 1)
    _m("narrow", None, X, 0, 0, 2)
    _m("select", None, X, 0, 1)
    _m("chunk", None, X, 3)
    _m("unbind", None, X)
    _m("split_with_sizes", None, X, (1, 2))
    _m("tensor_split", None, X, 3)
    _m("sum", None, X)
    _m("sum", None, X, 1)
    _m("mean", None, X)
    _m("mean", None, X, 1)
    _m("std", None, X)
    _m("var", None, X)
    _m("prod", None, X)
    _m("softmax", None, X, 1)
    _m("log_softmax", None, X, 1)
    _m("logsumexp", None, X, 1)
    _m("cumsum", None, X, 1)
    _m("flip", None, X, (0,))
    _m("roll", None, X, 1)
    _m("sort", None, X)
    _m("argsort", None, X)
    _m("topk", None, X, 2)
    _m("argmax", None, X)
    _m("argmin", None, X)
    _m("flatten", None, X)
    _m("flatten", None, X4, 1)
    _m("ravel", None, X)
    _m("view_as", None, X, X)
    _m("new_zeros", None, X, (2, 2))
    _m("new_ones", None, X, (2, 2))
    _m("new_empty", None, X, (2, 2))
    _m("new_full", None, X, (2, 2), 1.0)
    _m("repeat_interleave", None, X, 2)
    _m("diag", None, X)
    _m("diag_embed", None, X)
    _m("tril_", None, X)
    _m("triu_", None, X)
    _m("clamp_min_", None, X, 0.2)
    _m("clamp_max_", None, X, 0.8)
    _m("masked_fill_", None, X, Bo(3, 3), T())
    _m("addmm", None, X, X, X)
    _m("addmm_", None, X, X, X)
    _m("baddbmm_", None, T(2, 3, 3), T(2, 3, 3), T(2, 3, 3))
    _m("exp_", None, X)
    _m("sigmoid_", None, X)
    _m("tanh_", None, X)
    _m("relu_", None, X)
    _m("sqrt_", None, X)
    _m("log_", None, X)
    _m("abs_", None, X)
    _m("neg_", None, X)
    _m("sin_", None, X)
    _m("cos_", None, X)
    _m("reciprocal_", None, X)
    _m("rsqrt_", None, X)
    _m("square_", None, X)
    _m("floor_", None, X)
    _m("round_", None, X)


_curate_methods()

# Python-level names whose generic (schema-derived) template must not be used
NO_GENERIC = {"torch.stft", "torch.istft", "Tensor.stft", "Tensor.istft", "torch.from_file", "Tensor.set_",
              "torch.set_", "Tensor.backward", "Tensor.register_hook", "Tensor.share_memory_",
              "Tensor.pin_memory", "Tensor.is_pinned", "Tensor.record_stream", "Tensor.data_ptr",
              "torch.save", "torch.load", "torch.sym_constrain_range", "torch.sym_constrain_range_for_size",
              "torch.fbgemm_pack_quantized_matrix", "Tensor.map_", "Tensor.apply_", "Tensor.map2_"}

# Properties: measured as lambdas; lookup_method("T") finds them.
PROPERTIES = {"T", "mT", "H", "mH", "real", "imag"}


# ---------------------------------------------------------------------------------------------
# Modules


@dataclass
class ModSpec:
    qualname: str
    ctor: Callable[[Any], Any]        # nn -> module
    inputs: tuple                     # forward positional input specs
    input_names: tuple[str, ...] | None = None
    inplace: bool = False             # ctor accepts inplace=
    kwargs: tuple = ()                # forward kwargs specs


def module_specs() -> list[ModSpec]:
    S: list[ModSpec] = []

    def add(name: str, ctor: Callable[[Any], Any], *inputs: Any, inplace: bool = False,
            names: tuple[str, ...] | None = None, kwargs: tuple = ()) -> None:
        S.append(ModSpec("torch.nn." + name, ctor, tuple(inputs), names, inplace, kwargs))

    sx = T(3, 4, kind="sym")
    add("Linear", lambda nn: nn.Linear(4, 3), T(2, 4))
    add("Bilinear", lambda nn: nn.Bilinear(3, 4, 5), T(2, 3), T(2, 4))
    add("Conv1d", lambda nn: nn.Conv1d(3, 4, 3), X3)
    add("Conv2d", lambda nn: nn.Conv2d(3, 4, 3), X4)
    add("Conv3d", lambda nn: nn.Conv3d(2, 3, 3), X5)
    add("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(3, 4, 3), X3)
    add("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(3, 4, 3), X4)
    add("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(2, 3, 3), X5)
    add("LazyLinear", lambda nn: nn.LazyLinear(3), T(2, 4))
    add("BatchNorm1d", lambda nn: nn.BatchNorm1d(3), T(4, 3))
    add("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), X4)
    add("BatchNorm3d", lambda nn: nn.BatchNorm3d(2), X5)
    add("SyncBatchNorm", lambda nn: nn.SyncBatchNorm(3), X4)
    add("LayerNorm", lambda nn: nn.LayerNorm(4), T(2, 3, 4))
    add("RMSNorm", lambda nn: nn.RMSNorm(4), T(2, 3, 4))
    add("GroupNorm", lambda nn: nn.GroupNorm(3, 3), X4)
    add("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), X3)
    add("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3), X4)
    add("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(2), X5)
    add("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(2), X4)
    add("Embedding", lambda nn: nn.Embedding(5, 4), I(2, 3, high=5))
    add("EmbeddingBag", lambda nn: nn.EmbeddingBag(5, 4), I(2, 3, high=5))
    h = Lst(T(1, 2, 3), T(1, 2, 3), as_tuple=True)
    add("LSTM", lambda nn: nn.LSTM(4, 3), T(5, 2, 4), h, names=("input", "hx"))
    add("GRU", lambda nn: nn.GRU(4, 3), T(5, 2, 4), T(1, 2, 3), names=("input", "hx"))
    add("RNN", lambda nn: nn.RNN(4, 3), T(5, 2, 4), T(1, 2, 3), names=("input", "hx"))
    add("LSTMCell", lambda nn: nn.LSTMCell(4, 3), T(2, 4), Lst(T(2, 3), T(2, 3), as_tuple=True),
        names=("input", "hx"))
    add("GRUCell", lambda nn: nn.GRUCell(4, 3), T(2, 4), T(2, 3), names=("input", "hx"))
    add("RNNCell", lambda nn: nn.RNNCell(4, 3), T(2, 4), T(2, 3), names=("input", "hx"))
    for d, x in (("Dropout", X), ("Dropout1d", X3), ("Dropout2d", X4), ("Dropout3d", X5),
                 ("AlphaDropout", X), ("FeatureAlphaDropout", X4)):
        add(d, (lambda n: lambda nn, inplace=False: getattr(nn, n)(inplace=inplace))(d), x, inplace=True)
    for a in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Mish", "Hardtanh", "Hardswish",
              "Hardsigmoid", "RReLU"):
        add(a, (lambda n: lambda nn, inplace=False: getattr(nn, n)(inplace=inplace))(a), sx, inplace=True)
    add("Threshold", lambda nn, inplace=False: nn.Threshold(0.5, 0.0, inplace=inplace), sx, inplace=True)
    for a in ("GELU", "Sigmoid", "Tanh", "Softplus", "Softsign", "Softshrink", "Hardshrink", "Tanhshrink",
              "LogSigmoid", "Identity", "Flatten"):
        add(a, (lambda n: lambda nn: getattr(nn, n)())(a), sx)
    add("PReLU", lambda nn: nn.PReLU(), X4)
    add("GLU", lambda nn: nn.GLU(), T(2, 4))
    for a in ("Softmax", "LogSoftmax", "Softmin", "Softmax2d"):
        add(a, (lambda n: lambda nn: getattr(nn, n)(dim=1) if n != "Softmax2d" else nn.Softmax2d())(a), X4)
    add("Unflatten", lambda nn: nn.Unflatten(1, (2, 2)), T(3, 4))
    add("MaxPool1d", lambda nn: nn.MaxPool1d(2), X3)
    add("MaxPool2d", lambda nn: nn.MaxPool2d(2), X4)
    add("MaxPool3d", lambda nn: nn.MaxPool3d(2), X5)
    add("AvgPool1d", lambda nn: nn.AvgPool1d(2), X3)
    add("AvgPool2d", lambda nn: nn.AvgPool2d(2), X4)
    add("AvgPool3d", lambda nn: nn.AvgPool3d(2), X5)
    add("LPPool1d", lambda nn: nn.LPPool1d(2, 2), X3)
    add("LPPool2d", lambda nn: nn.LPPool2d(2, 2), X4)
    add("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(2), X3)
    add("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d(2), X4)
    add("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d(2), X5)
    add("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(2), X3)
    add("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d(2), X4)
    add("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2), X5)
    add("FractionalMaxPool2d", lambda nn: nn.FractionalMaxPool2d(2, output_size=2), X4)
    add("Upsample", lambda nn: nn.Upsample(scale_factor=2), X4)
    add("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2), X4)
    add("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), X4)
    add("PixelShuffle", lambda nn: nn.PixelShuffle(2), T(1, 4, 2, 2))
    add("PixelUnshuffle", lambda nn: nn.PixelUnshuffle(2), T(1, 1, 4, 4))
    add("ChannelShuffle", lambda nn: nn.ChannelShuffle(2), T(1, 4, 2, 2))
    for a in ("ZeroPad1d", "ConstantPad1d", "ReflectionPad1d", "ReplicationPad1d", "CircularPad1d"):
        add(a, (lambda n: lambda nn: getattr(nn, n)(1, 0.0) if n.startswith("Constant") else getattr(nn, n)(1))(a), X3)
    for a in ("ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d", "CircularPad2d"):
        add(a, (lambda n: lambda nn: getattr(nn, n)(1, 0.0) if n.startswith("Constant") else getattr(nn, n)(1))(a), X4)
    for a in ("ZeroPad3d", "ConstantPad3d", "ReflectionPad3d", "ReplicationPad3d", "CircularPad3d"):
        add(a, (lambda n: lambda nn: getattr(nn, n)(1, 0.0) if n.startswith("Constant") else getattr(nn, n)(1))(a), X5)
    add("Fold", lambda nn: nn.Fold((4, 4), 2), T(2, 12, 9))
    add("Unfold", lambda nn: nn.Unfold(2), X4)
    add("CosineSimilarity", lambda nn: nn.CosineSimilarity(), T(4, 5), T(4, 5))
    add("PairwiseDistance", lambda nn: nn.PairwiseDistance(), T(4, 5), T(4, 5))
    tgt_i = I(4, high=5)
    for a in ("MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
              "SoftMarginLoss", "MultiLabelSoftMarginLoss", "PoissonNLLLoss", "HingeEmbeddingLoss"):
        add(a, (lambda n: lambda nn: getattr(nn, n)())(a), T(4, 5), T(4, 5))
    add("CrossEntropyLoss", lambda nn: nn.CrossEntropyLoss(), T(4, 5), tgt_i)
    add("NLLLoss", lambda nn: nn.NLLLoss(), T(4, 5), tgt_i)
    add("MultiMarginLoss", lambda nn: nn.MultiMarginLoss(), T(4, 5), tgt_i)
    add("MultiLabelMarginLoss", lambda nn: nn.MultiLabelMarginLoss(), T(4, 5), I(4, 5, high=5))
    add("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(), T(4, 5), T(4, 5), T(4, 5))
    add("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(), T(4, 5), T(4, 5), T(4))
    add("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(), T(4), T(4), T(4))
    add("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(), T(4, 5), T(4, 5), T(4, 5))
    add("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(), T(4, 5), T(4, 5),
        T(4, 5))
    add("CTCLoss", lambda nn: nn.CTCLoss(), T(6, 2, 4), I(2, 3, low=1, high=4), (6, 6), (3, 3))
    add("MultiheadAttention", lambda nn: nn.MultiheadAttention(4, 2), T(3, 2, 4), T(3, 2, 4), T(3, 2, 4))
    add("TransformerEncoderLayer", lambda nn: nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0), T(3, 2, 4))
    add("TransformerDecoderLayer", lambda nn: nn.TransformerDecoderLayer(4, 2, 8, dropout=0.0), T(3, 2, 4),
        T(3, 2, 4))
    return S

