"""The gradient-flow layers over the torch domain: each class specialises one role of
engine/domain/ (``FlowTensors(Tensors)`` ...), calls it (``super()``), and records what it
produced in the ``flow`` role's tables (cuts, shapes, dtypes, views), running the checks of
gradient flow where a call needs them (a backward, a ``requires_grad`` change, an optimizer).
"""
from __future__ import annotations

import ast
import dataclasses
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.checks.branches import check_where
from gradwarden.engine.checks.flowfacts import Cut, DATA, ShapeV, SizeV, join_cuts
from gradwarden.engine.checks.gradorder import check_gradient_order
from gradwarden.engine.diagnostic import Span
from gradwarden.engine.events import Event
from gradwarden.engine.domain.stateless import FUNCTIONAL_CALLS, functional_call
from gradwarden.engine.state.model import fresh_id
from gradwarden.engine.domain import flowshape as fs, optable
from gradwarden.engine.domain.builtins import Builtins
from gradwarden.engine.domain.flowops import PAIR_METHODS, PART_METHODS, function_shape, method_shape, module_shape
from gradwarden.engine.domain.functions import CustomFunctions
from gradwarden.engine.domain.modules import Modules
from gradwarden.engine.domain.optimizers import Optimizers
from gradwarden.engine.domain.tensors import Tensors
from gradwarden.engine.domain.torchsem import TorchCalls
from gradwarden.engine.state.model import (
    ConstV, NumberV, ObjV, PLAIN_NUMBER, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, UnknownV, Value,
)


VALUE_METHODS = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__bool__"})
META_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "stride", "data_ptr", "is_contiguous",
                          "element_size", "__len__", "get_device", "storage_offset", "is_floating_point",
                          "is_complex"})
META_ATTRS = frozenset({"shape", "ndim", "device", "dtype", "is_cuda", "layout"})
LAYOUT = frozenset({"t", "T", "mT", "transpose", "permute", "swapaxes", "swapdims", "movedim", "adjoint", "mH", "H"})

CHECKPOINT = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
MOVES = frozenset({"to", "cuda", "cpu", "type", "type_as", "double", "half", "bfloat16"})
# torch calls that build a tensor from the values of their first argument
DATA_CTORS = frozenset({"tensor", "as_tensor", "asarray", "from_numpy", "Tensor", "FloatTensor", "DoubleTensor",
                        "LongTensor", "IntTensor", "BoolTensor", "HalfTensor", "ByteTensor", "frombuffer"})
# methods whose other tensor arguments lend only a dtype, a device or a shape (never a graph)
SHAPE_ONLY_ARGS = frozenset({"to", "type", "type_as", "view_as", "reshape_as", "expand_as", "new_zeros", "new_ones",
                             "new_empty", "new_full", "new_tensor", "cuda", "cpu"})

_JOINS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
          "torch.dstack")
_FROM_PRETRAINED = ("torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained",
                    "torch.nn.modules.sparse.Embedding.from_pretrained")

_CAST_KIND = {"long": "int", "int": "int", "short": "int", "byte": "int", "char": "int", "bool": "bool",
              "float": "float", "double": "float", "half": "float", "bfloat16": "float", "argmax": "int",
              "argmin": "int", "argsort": "int", "nonzero": "int", "eq": "bool", "ne": "bool", "lt": "bool",
              "le": "bool", "gt": "bool", "ge": "bool", "isnan": "bool", "isinf": "bool", "isfinite": "bool",
              "logical_not": "bool", "logical_and": "bool", "logical_or": "bool"}
_SAME_DTYPE = frozenset({"clone", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze", "t",
                         "transpose", "permute", "expand", "repeat", "detach", "cpu", "cuda", "flip", "roll"})
_DTYPE_KINDS = {"bool": "bool", "long": "int", "int64": "int", "int": "int", "int32": "int", "int16": "int",
                "int8": "int", "uint8": "int", "short": "int", "float": "float", "float32": "float",
                "float64": "float", "double": "float", "float16": "float", "half": "float", "bfloat16": "float"}


def _dtype_kind(v: Any) -> Optional[str]:
    if isinstance(v, RefV) and v.kind == "torch":
        return _DTYPE_KINDS.get(v.name.rsplit(".", 1)[-1])
    return None


def _literal_kind(v: Any) -> Optional[str]:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, tuple) and v:
        kinds = {_literal_kind(x) for x in v}
        if len(kinds) == 1:
            return kinds.pop()
        if kinds <= {"int", "float"}:
            return "float"
    return None


def _narrow_index(shape: Optional[Tuple[Any, ...]], args: List[Any]) -> Optional[Tuple[Any, ...]]:
    """The basic index ``x.narrow(dim, start, length)`` stands for, when all three are known ints
    (a negative dim or start needs the rank or the length of that dim)."""
    if len(args) < 3 or not all(isinstance(a, int) and not isinstance(a, bool) for a in args[:3]):
        return None
    dim, start, length = args[:3]
    if dim < 0 or start < 0:
        if shape is None or fs.ELL in shape:
            return None
        dim = dim + len(shape) if dim < 0 else dim
        if not 0 <= dim < len(shape):
            return None
        if start < 0:
            n = shape[dim]
            if not isinstance(n, int):
                return None
            start += n
    return (slice(None),) * dim + (slice(start, start + length),)


def _leading_slice(index: Tuple[Any, ...]) -> bool:
    """Does this basic index keep a contiguous tensor contiguous? (ints and step-1 slices on
    leading dims only, then full slices.)"""
    seen_partial = False
    for item in index:
        if item is ...:
            return False
        if item is None:
            continue
        if isinstance(item, int):
            if seen_partial:
                return False
            continue
        if isinstance(item, slice):
            if item.step not in (None, 1):
                return False
            full = item.start is None and item.stop is None
            if seen_partial and not full:
                return False
            if not full:
                seen_partial = True
            continue
        return False
    return True


# ops whose -inf / exact-zero results the GW720 check follows (engine/checks/branches.py)
ZERO_TRACKED = frozenset({"masked_fill", "masked_fill_", "softmax", "exp", "log", "log_softmax"})

# torch's transformer blocks (not in the op table): what their call reaches is their input and
# their own parameters (flowtorch's _block_on_graph)
TRANSFORMER_BLOCKS = frozenset({"TransformerEncoder", "TransformerEncoderLayer", "TransformerDecoder",
                                "TransformerDecoderLayer"})

class FlowTorchCalls(TorchCalls):
    """The flow layer over torch calls: cuts of factories and re-wraps, shapes,
    dtypes, checkpoints, autograd.grad."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ------------------------------------------------------------------ torch.* calls
    def call_torch(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        short = qual.rsplit(".", 1)[-1]
        if qual in FUNCTIONAL_CALLS:
            ran = functional_call(self.it, args, kwargs, st, node)  # the module on the given tensors (domain/stateless.py)
            if ran is not None:
                return ran
        if qual in ("torch.as_tensor", "torch.asarray") and args and isinstance(args[0], TensorV):
            moves = {k: v for k, v in kwargs.items() if k in ("dtype", "device")}
            if not moves:
                return args[0]  # measured: as_tensor(t) is t itself (keeps its graph)
            return self.it.tensors.call_tensor_method(args[0], "to", [], moves, st, node)
        if qual in _JOINS and args and isinstance(args[0], SeqV) and not st.lists.get(args[0].lid):
            # torch.cat([]) raises: a program that goes on filled the list where we cannot see
            return self.it.graph.unknown_tensor(st, qual.rsplit(".", 1)[-1], rg=None)
        if qual in _FROM_PRETRAINED:
            return self._from_pretrained(qual, args, kwargs, st, node)
        if short == "vector_to_parameters" and qual.startswith("torch.nn.utils") and args and isinstance(args[0], TensorV):
            info = st.t.get(args[0].tid)
            if info is not None and info.rg is not False and st.grad_enabled:
                # it assigns each parameter's `.data` a slice of the vector: the parameters get its values
                # and none of its graph, so what made the vector (a hypernetwork) gets no gradient
                cut = self.flow._cut_here("data_attr", self.it.span_of(node),
                                          "`vector_to_parameters` (it sets each parameter's `.data`)")
                self.flow.reach.note_cut(st, cut, [args[0]])
                targets = args[1] if len(args) > 1 else kwargs.get("parameters")
                for p in self.it.ev.known_items(targets, st) or () if targets is not None else ():
                    if isinstance(p, TensorV):
                        self.flow.reach.note_leaf(p.tid, cut)  # a loss through these parameters uses the vector's values
        if qual in ("torch.autograd.Variable", "torch.autograd.variable.Variable") and args and \
                isinstance(args[0], TensorV):
            if self.it.ev.truth_of(kwargs.get("requires_grad", ConstV(False))) is True:
                t = self.it.graph.new_tensor(st, rg=True, node=node)
                c = self.flow._tensor_cut(st, args[0])
                if c is not None and c.kind != "data":
                    self.flow.rewrapped[t.tid] = c
                return t
            return args[0]
        if qual in {"torch.device", "torch.dtype", "torch.Size", "torch.finfo", "torch.iinfo", "torch.get_default_dtype",
                    "torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available"}:
            return PLAIN_NUMBER  # a device, dtype or size: never a tensor
        ck = qual in CHECKPOINT and self.it.training.check_checkpoint(qual, args, kwargs, st, node)
        if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and \
                getattr(node, "_gw_statement", False):
            mode = args[0] if args else kwargs.get("mode")
            if isinstance(mode, ConstV) and mode.value is False:
                self.flow.global_nograd = self.it.span_of(node)
            else:  # True, or a mode not known here (a saved one restored): no longer a known cut
                self.flow.global_nograd = None
        seq0 = st.seq
        out = super().call_torch(qual, args, kwargs, st, node)
        if qual == "torch.where":
            check_where(self.it, st, node, args)  # GW720 (engine/checks/branches.py)
        elif short in ZERO_TRACKED and args and isinstance(args[0], TensorV):
            self.flow.zeros.after(st, short, args[0], out, node)
        if isinstance(out, TensorV) and (self.flow.zeros.exact or short in ("zeros", "zeros_like")):
            self.flow.zeros.track(st, short, list(args), out, node)  # exact zeros (engine/checks/branches.py)
        if isinstance(out, TensorV) and (short == "unsqueeze" or self.flow.zeros.pairs.views):
            self.flow.zeros.pairs.track(st, short, list(args), kwargs, out, node)  # engine/checks/zerodiag.py
        if short == "Parameter" and args and isinstance(args[0], TensorV) and isinstance(out, TensorV):
            src = st.t.get(args[0].tid)
            if src is not None and src.grad_fn is not None and src.rg is True:
                # a computed tensor re-wrapped as a new leaf: its graph ends here
                self.flow.reach.note_rewrap(st, self.flow._cut_here("rewrap", self.it.span_of(node), "`nn.Parameter(...)`"),
                                            args[0], out)
        if not isinstance(out, (TensorV, SeqV)):
            return out
        if isinstance(out, SeqV) and short in PAIR_METHODS and args and isinstance(args[0], TensorV):
            self.flow._pair_shapes(st, out, short, self.flow.shapes.get(args[0].tid), args[1:], kwargs)
        span = self.it.span_of(node)
        tensors = [x for a in list(args) + list(kwargs.values()) for x in self.it.graph.slot_tensors(st, a)]
        if any(x.tid in self.flow.unknown_derived for x in tensors):
            self.flow._derive(out, st)
        if isinstance(out, TensorV):
            oi = st.t.get(out.tid)
            if oi is not None and oi.grad_fn is None and oi.created == span and out.tid not in self.flow.cuts and (
                    not tensors or short in DATA_CTORS or short.endswith("_like")):
                self._fresh_tensor(qual, short, out, args, kwargs, st, span)  # a factory's new leaf
            if oi is not None and out.tid not in self.flow.shapes and not self.it.standalone:
                functional = qual.startswith("torch.nn.functional.")
                try:
                    shape = function_shape(short, [self.flow._py(a, st) for a in args],
                                           {k: self.flow._py(v, st) for k, v in kwargs.items()}, functional)
                except (TypeError, ValueError, IndexError):
                    shape = None
                if shape is not None:
                    self.flow.shapes[out.tid] = shape
            if "dtype" in kwargs:
                self.flow.explicit_dtype.add(out.tid)
            if "device" in kwargs:
                self.flow.explicit_device.add(out.tid)
            kind = _dtype_kind(kwargs.get("dtype"))
            if kind is None and short in ("randint", "arange") and all(
                    isinstance(a, ConstV) and isinstance(a.value, int) for a in args):
                kind = "int"
            if kind is None and short in ("tensor", "as_tensor") and args:
                kind = _literal_kind(self.flow._py(args[0], st))
            if kind is None and short in {"zeros_like", "ones_like", "empty_like", "full_like"} and args and \
                    isinstance(args[0], TensorV) and "dtype" not in kwargs:
                kind = self.flow.dtypes.get(args[0].tid)
            if kind is not None:
                self.flow.dtypes[out.tid] = kind
        if ck and isinstance(out, TensorV) and st.t.get(out.tid) is not None and st.t[out.tid].rg is False:
            # reentrant checkpoint whose inputs do not require grad: its output has no graph, for sure
            self.flow.cuts[out.tid] = self.flow._cut_here("checkpoint", span, "reentrant `checkpoint`")
            return out
        opaque = self.flow._opaque("function", qual, args, kwargs, st) or qual in CHECKPOINT
        self.flow._after_call(out, st, seq0, opaque, tensors)
        return out

    def _from_pretrained(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        """``nn.Embedding.from_pretrained(w)``: a module whose weight is frozen unless
        ``freeze=False`` (torch's default is ``freeze=True``)."""
        obj = self.it.modules.construct_torch_module(qual.rsplit(".", 1)[0], [], {}, st, node)
        if not isinstance(obj, ObjV):
            return obj
        data = args[0] if args else kwargs.get("embeddings", UNKNOWN)
        freeze = self.it.ev.truth_of(kwargs.get("freeze", args[1] if len(args) > 1 else TRUE))
        span = self.it.span_of(node)
        for _, p in self.it.modules.module_params(obj, st):
            if isinstance(data, TensorV) and data.tid in self.flow.shapes:
                self.flow.shapes[p.tid] = self.flow.shapes[data.tid]
            if freeze is False:
                continue
            st.update_t(p.tid, rg=False if freeze is True else None)
            if freeze is True:
                self.flow.cuts[p.tid] = self.flow._cut_here("frozen", span, "`from_pretrained` (which freezes by default)")
        return obj

    def construct_distribution(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        out = super().construct_distribution(qual, args, kwargs, st, node)
        self.flow.samples.constructed(qual, args, kwargs, out)  # Independent(Normal(...)): engine/checks/samples.py
        return out

    def distribution_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        out = super().distribution_method(obj, name, args, kwargs, st, node)
        self.flow.samples.after_method(st, obj, name, list(args) + list(kwargs.values()), out, node)  # GW722
        return out

    def make_parameter(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        p = super().make_parameter(args, kwargs, st, node)
        data = args[0] if args else kwargs.get("data")
        if isinstance(p, TensorV) and isinstance(data, TensorV):
            if data.tid in self.flow.shapes:
                self.flow.shapes[p.tid] = self.flow.shapes[data.tid]  # a Parameter wraps the same data
            if data.tid in self.flow.dtypes:
                self.flow.dtypes[p.tid] = self.flow.dtypes[data.tid]
        return p

    def _fresh_tensor(self, qual: str, short: str, out: TensorV, args: List[Value], kwargs: Dict[str, Value],
                      st: State, span: Span) -> None:
        """A new leaf made by a torch call (a factory, ``torch.tensor(...)``): data, or a re-wrap
        of a value whose gradient path ended earlier."""
        oi = st.t[out.tid]
        if short in DATA_CTORS:
            # built from values: what the values are decides (a re-wrap keeps no graph)
            origin = self._value_cut(args[:1] + [v for k, v in kwargs.items() if k == "data"], st)
        else:
            # a factory (randn, zeros, full, ..._like): data, whatever its sizes; a value taken
            # from a tensor (`torch.full(s, loss.item())`) is a re-wrap all the same
            numbers = [v for v in [*args, *kwargs.values()] if isinstance(v, NumberV) and v.cut is not None]
            origin = numbers[0].cut if numbers else DATA
        if oi.rg is False:
            if origin is None:
                return
            if origin.kind == "data" and not origin.origin:
                if origin.sure:
                    self.flow.cuts[out.tid] = DATA
                return
            self.flow.cuts[out.tid] = cut = self.flow._cut_here("rewrap", span, f"`{qual.replace('torch.', 'torch.', 1)}(...)`",
                                                                sure=origin.sure, origin=origin)
            if origin.kind == "detach" and origin.span is None:
                # a copy of tensors that carry graphs (`torch.tensor([loss_a, loss_b])`): the graphs it left
                graphed = [t for v in args[:1] for t in self.it.graph.slot_tensors(st, v)
                           if t.tid in st.t and st.t[t.tid].rg is True]
                if graphed:
                    self.flow.reach.note_cut(st, cut, graphed)
        elif oi.rg is True and origin is not None and origin.kind != "data":
            self.flow.rewrapped[out.tid] = cut = self.flow._cut_here("rewrap", span, f"`{qual}(...)`", origin=origin)
            self.flow.reach.note_leaf(out.tid, origin)  # `torch.tensor(w.tolist(), requires_grad=True)`
            if origin.kind == "detach" and origin.span is None:
                # `torch.tensor(losses, requires_grad=True)` of tensors that carry graphs: a new leaf
                # holding their values; a loss computed from it reaches none of those graphs
                graphed = [t for v in args[:1] for t in self.it.graph.slot_tensors(st, v)
                           if t.tid in st.t and st.t[t.tid].rg is True]
                if graphed:
                    self.flow.reach.note_rewrap(st, cut, graphed[0], out)
                    self.flow.reach.note_cut(st, cut, graphed[1:])

    def _value_cut(self, values: Sequence[Value], st: State, depth: int = 0) -> Optional[Cut]:
        """What the values a new tensor is built from tell about gradient flow: the most telling
        cut among them, DATA when they are plain data, None when something is unknown."""
        cuts: List[Optional[Cut]] = []
        for v in values:
            if isinstance(v, ConstV) or isinstance(v, RefV) and v.kind == "torch":
                continue
            if isinstance(v, NumberV):
                cuts.append(v.cut if v.cut is not None else DATA)
            elif isinstance(v, TensorV):
                info = st.t.get(v.tid)
                if info is None:
                    return None
                if info.rg is False:
                    cuts.append(self.flow.cuts.get(v.tid))
                else:
                    cuts.append(Cut("detach", None, "a copy", sure=True))  # torch.tensor(t): a detached copy
            elif isinstance(v, SeqV) and depth < 3:
                cuts.append(self._value_cut(st.lists.get(v.lid, ())[:32], st, depth + 1))
            else:
                return None
        return join_cuts(cuts)

    # ------------------------------------------------------------------ autograd.grad / backward
    def torch_autograd_call(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        span = self.it.span_of(node)
        outputs = args[0] if args else kwargs.get("outputs", kwargs.get("tensors"))
        roots = self.it.graph.slot_tensors(st, outputs) if outputs is not None else []
        is_grad = qual.endswith(".grad")
        if is_grad:
            grads = kwargs.get("grad_outputs", args[2] if len(args) > 2 else None)
        else:
            grads = kwargs.get("grad_tensors", args[1] if len(args) > 1 else None)
        given = grads is not None and not (isinstance(grads, ConstV) and grads.value is None)
        if roots:
            self.it.losses.check_backward(st, roots, span, given, "autograd.grad" if is_grad else "autograd.backward")
        if is_grad:
            inputs = kwargs.get("inputs", args[1] if len(args) > 1 else None)
            allow = kwargs.get("allow_unused", args[5] if len(args) > 5 else None)
            materialize = kwargs.get("materialize_grads")
            allow_b = self.it.ev.truth_of(allow) if allow is not None else False
            if self.it.ev.truth_of(materialize) is True if materialize is not None else False:
                allow_b = True
            if inputs is not None and roots:
                self.it.losses.check_grad_inputs(st, roots, inputs, allow_b, span)
        out = super().torch_autograd_call(qual, args, kwargs, st, node)
        if is_grad and isinstance(out, SeqV):
            create = kwargs.get("create_graph", args[4] if len(args) > 4 else None)
            for x in st.lists.get(out.lid, ()):
                if not isinstance(x, TensorV):
                    continue
                if self.it.ev.truth_of(create) is True if create is not None else False:
                    self.flow.fake_leaves.add(x.tid)
                else:
                    cut = dataclasses.replace(self.flow._cut_here(
                        "detach", span, "`torch.autograd.grad` (without `create_graph=True`)"), at_cut=True)
                    self.flow.cuts[x.tid] = cut
                    # the gradient is a function of the graph it was taken through (a gradient
                    # penalty's norm depends on the critic's weights): without create_graph it
                    # leaves that graph, and a loss it is added to gets nothing through it
                    self.flow.reach.note_cut(st, cut, roots)
        return out

    def grad_mode_of(self, ctx: Value, st: State) -> Optional[bool]:
        mode = super().grad_mode_of(ctx, st)
        if self.flow.with_stack:
            if mode is False:
                self.flow.with_stack[-1][1] = True
        return mode


class FlowTensors(Tensors):
    """The flow layer over tensor methods: cuts, shapes, layouts, dtypes; backward
    and requires_grad checks."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ------------------------------------------------------------------ tensor methods
    def call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        info = st.t.get(t.tid)
        if info is None:
            return super().call_tensor_method(t, name, args, kwargs, st, node, fn_name)
        if name == "backward":
            grad = kwargs.get("gradient", args[0] if args else None)
            given = grad is not None and not (isinstance(grad, ConstV) and grad.value is None)
            self.it.losses.check_backward(st, [t], self.it.span_of(node), given, "backward")
        elif name == "requires_grad_":
            self.it.training.check_requires_grad_change(st, t, args[0] if args else kwargs.get("requires_grad", TRUE), node,
                                                        method=True)
        elif name == "retain_grad":
            self.flow.retained.add(t.tid)
        elif name in {"detach_", "copy_", "index_put_", "index_put"}:
            self.it.viewchecks.check_view_method(st, t, name, args, kwargs, node)
        seq0 = st.seq
        rg0 = info.rg
        detached = None
        if name == "detach_" and rg0 is True:
            # the graph the tensor leaves, noted before detach_() drops its grad_fn: a parameter reached only
            # through it no longer trains (GW719 at the detach_, engine/checks/reach.py)
            detached = self.flow._cut_here("detach", self.it.span_of(node), "`.detach_()`")
            self.flow.reach.note_cut(st, detached, [t])
        out = super().call_tensor_method(t, name, args, kwargs, st, node, fn_name)
        if t.tid in self.flow.unknown_derived:
            self.flow._derive(out, st)
        if name in ("expand", "expand_as") and isinstance(out, TensorV) and out.tid != t.tid:
            self.it.viewchecks.note_expand(st, t, out, name, args, node)
        span = self.it.span_of(node)
        if name in ZERO_TRACKED:
            self.flow.zeros.after(st, name, t, out, node)  # GW720: log of a softmax over -inf
        if self.flow.zeros.exact or name == "new_zeros":
            self.flow.zeros.track(st, name, [t] + list(args), out, node)  # GW720: sqrt of an exact zero
        if isinstance(out, TensorV) and (name == "unsqueeze" or self.flow.zeros.pairs.views):
            self.flow.zeros.pairs.track(st, name, [t] + list(args), kwargs, out, node)  # GW720: zero diagonal
        if name in VALUE_METHODS or name in META_METHODS:
            if isinstance(out, UnknownV):
                if name == "size" and len(args) == 1 and not kwargs and isinstance(args[0], ConstV) \
                        and type(args[0].value) is int:
                    return SizeV(t.tid, args[0].value)
                if name in META_METHODS:
                    return PLAIN_NUMBER
                cut = self.flow._cut_here("item", span, f"`.{name}()`") if rg0 is not False else self.flow.cuts.get(t.tid)
                if rg0 is not False:
                    self.flow.reach.note_cut(st, cut, [t])
                return NumberV(cut)
            return out
        inplace = name.endswith("_") and not name.endswith("__")
        values = list(args) + list(kwargs.values()) if kwargs else args
        tensors = [t]
        for a in values:
            if a.__class__ is TensorV:
                tensors.append(a)  # type: ignore[arg-type]
            else:
                tensors.extend(self.it.graph.slot_tensors(st, a))
        opaque = name not in SHAPE_ONLY_ARGS and self.flow._opaque("method", name, args, kwargs, st)
        if inplace:
            self.flow._after_inplace(st, t, tensors[1:], opaque, name)
            self.flow._with_numbers(st, t, values)
            if name == "requires_grad_":
                flag_node = node.args[0] if isinstance(node, ast.Call) and node.args else None
                self.flow._after_requires_grad(st, t, args[0] if args else kwargs.get("requires_grad", TRUE), span,
                                               flag_node)
            if name == "detach_":
                self.flow.cuts[t.tid] = detached or (self.flow._cut_here("detach", span, "`.detach_()`") if rg0 is not False
                                                     else self.flow.cuts.get(t.tid, DATA))
            return out
        if isinstance(out, SeqV) and name in PAIR_METHODS:
            self.flow._pair_shapes(st, out, name, self.flow.shapes.get(t.tid), args, kwargs)
        elif isinstance(out, SeqV) and name in PART_METHODS:
            self.flow._part_shapes(st, out, name, self.flow.shapes.get(t.tid), args, kwargs)
        if isinstance(out, TensorV) and out.tid != t.tid:
            oi = st.t.get(out.tid)
            if oi is not None and oi.rg is False and out.tid not in self.flow.cuts:
                if name.startswith("new_"):
                    self.flow.cuts[out.tid] = DATA
                elif not st.grad_enabled:
                    self.flow.cuts[out.tid] = c = self.flow._nograd_cut(st, tensors, span)
                    self.flow.reach.note_cut(st, c, tensors)
                elif rg0 is not False:
                    self.flow.cuts[out.tid] = c = self.flow._cut_here("nondiff", span, f"`.{name}()`")
                    # indices (`.argmax()`): a parameter reached only through them gets no gradient
                    self.flow.reach.note_cut(st, c, tensors, config=self.flow.modes.current())
                else:
                    c = self.flow._inputs_cut(st, tensors)
                    if c is not None:
                        self.flow.cuts[out.tid] = c
            self._method_facts(st, t, name, args, kwargs, out, span, info)
            self.flow._with_numbers(st, out, values)
        self.flow._after_call(out, st, seq0, opaque, tensors)
        return out

    def _method_facts(self, st: State, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value],
                      out: TensorV, span: Span, info: Any) -> None:
        # shapes only serve the non-scalar backward check of code run in context; a function
        # analysed on its own has arguments of unknown shape
        if out.tid not in self.flow.shapes and not self.it.standalone:
            try:
                shape = method_shape(name, self.flow.shapes.get(t.tid), [self.flow._py(a, st) for a in args],
                                     {k: self.flow._py(v, st) for k, v in kwargs.items()})
            except (TypeError, ValueError, IndexError):
                shape = None
            if shape is not None:
                self.flow.shapes[out.tid] = shape
        if name in LAYOUT:
            self.flow.layouts[out.tid] = t.tid
            self.flow.noncontig.add(out.tid)
        elif name in {"expand", "expand_as", "narrow", "diagonal", "as_strided"}:
            self.flow.noncontig.add(out.tid)
        if name == "narrow" and t.tid not in self.flow.unknown_derived:
            index = _narrow_index(self.flow.shapes.get(t.tid), [self.flow._py(a, st) for a in args]) \
                or self._narrow_by_size(t, args)
            if index is not None:  # `x.narrow(d, s, n)` is `x[:, ..., s:s + n]`: the overlap checks read it so
                self.flow.slices[out.tid] = (t.tid, index)
        if name == "unfold":
            self.it.viewchecks.mark_unfold(st, t, out, args, kwargs, span)
        kind = _CAST_KIND.get(name)
        if kind is None and name in ("to", "type") and args:
            kind = _dtype_kind(args[0])
        if kind is None and name in ("to", "type") and "dtype" in kwargs:
            kind = _dtype_kind(kwargs["dtype"])
        if kind is None and name in _SAME_DTYPE and t.tid in self.flow.dtypes:
            kind = self.flow.dtypes[t.tid]
        if kind is not None:
            self.flow.dtypes[out.tid] = kind
        if name in MOVES and info.rg is True and info.grad_fn is None and out.tid != t.tid:
            if not self._certain_copy(st, t, name, args, kwargs):
                self.flow.maybe_leaf[out.tid] = span
            else:
                # certainly a copy (a dtype conversion): a tensor of its own, whose writes
                # never reach the leaf it was made from
                st.update_t(out.tid, counter=out.tid, storage=out.tid)
        if t.tid in self.flow.explicit_dtype and name in {"clone", "detach", "contiguous"}:
            self.flow.explicit_dtype.add(out.tid)

    def _certain_copy(self, st: State, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value]) -> bool:
        """`.double()` of a float32 tensor is a copy (a new non-leaf); `.to(device)` may be the
        tensor itself (same device): only dtype conversions of default-dtype tensors are sure."""
        if name == "cuda":
            return t.tid not in self.flow.explicit_device  # created on the CPU: .cuda() copies
        if name == "to" and t.tid not in self.flow.explicit_device:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, ConstV) and isinstance(a.value, str) and a.value.startswith("cuda"):
                    return True
        if t.tid in self.flow.explicit_dtype:
            return False
        if name in {"double", "half", "bfloat16"}:
            return True
        if name == "to":
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, RefV) and a.kind == "torch" and a.name.rsplit(".", 1)[-1] in {
                        "float64", "double", "float16", "half", "bfloat16"}:
                    return True
        return False

    # ------------------------------------------------------------------ attributes, indexing, operators
    def _narrow_by_size(self, t: TensorV, args: List[Value]) -> Optional[Tuple[Any, ...]]:
        """``x.narrow(d, s, n + off)`` where ``n`` is the size of dim ``d`` of ``x`` (or of a tensor of
        the same known shape, `prev = x.clone()`): the index ``x[..., s:]`` (``s + off == 0``) or
        ``x[..., s:s + off]`` (``s + off < 0``), whatever ``n`` is."""
        if len(args) < 3 or not isinstance(args[0], ConstV) or not isinstance(args[1], ConstV):
            return None
        dim, start, size = args[0].value, args[1].value, args[2]
        if type(dim) is not int or type(start) is not int or start < 0 or not isinstance(size, SizeV):
            return None
        shape = self.flow.shapes.get(t.tid)
        if shape is None or fs.ELL in shape:
            return None
        rank = len(shape)
        d, sd = dim + rank if dim < 0 else dim, size.dim + rank if size.dim < 0 else size.dim
        if not 0 <= d < rank or d != sd:
            return None
        if size.tid != t.tid and self.flow.shapes.get(size.tid) != shape:
            return None
        n = shape[d]
        if isinstance(n, int):  # the size is known: the exact window
            length = n + size.offset
            return (slice(None),) * d + (slice(start, start + length),) if 0 < length and start + length <= n else None
        end = start + size.offset
        if end > 0:
            return None  # longer than what is left of the dim: narrow raises
        return (slice(None),) * d + (slice(start, end if end < 0 else None),)

    def tensor_getattr(self, t: TensorV, attr: str, st: State, node: ast.AST) -> Value:
        if attr == "grad":
            self.it.training.check_grad_read(st, t, node)
            self.it.training.check_grad_accumulated(st, t, node)
        out = super().tensor_getattr(t, attr, st, node)
        if attr in META_ATTRS:
            if attr == "shape" and isinstance(out, UnknownV):
                return ShapeV(t.tid)  # its items are the sizes of t's dims (`x.narrow(-1, 1, x.shape[-1] - 1)`)
            return PLAIN_NUMBER if isinstance(out, UnknownV) else out
        if not isinstance(out, TensorV) or out.tid == t.tid:
            return out
        info = st.t.get(t.tid)
        if attr == "grad":
            self.flow.grad_owner[out.tid] = t.tid
        elif attr == "data":
            if t.tid in self.flow.grad_owner:
                self.flow.grad_owner[out.tid] = self.flow.grad_owner[t.tid]
            if info is not None and info.rg is not False:
                self.flow.cuts[out.tid] = c = self.flow._cut_here("data_attr", self.it.span_of(node), "`.data`")
                self.flow.reach.note_cut(st, c, [t])
            elif t.tid in self.flow.cuts:
                self.flow.cuts[out.tid] = self.flow.cuts[t.tid]
            if t.tid in self.flow.shapes:
                self.flow.shapes[out.tid] = self.flow.shapes[t.tid]
        elif attr in {"T", "mT", "mH", "H"}:
            shape = method_shape(attr, self.flow.shapes.get(t.tid), [], {})
            if shape is not None:
                self.flow.shapes[out.tid] = shape
            self.flow.layouts[out.tid] = t.tid
            self.flow.noncontig.add(out.tid)
        return out

    def tensor_setattr(self, t: TensorV, attr: str, value: Value, st: State, target: ast.Attribute,
                       stmt: ast.AST) -> None:
        if attr == "requires_grad":
            self.it.training.check_requires_grad_change(st, t, value, stmt, method=False)
        super().tensor_setattr(t, attr, value, st, target, stmt)
        if attr == "requires_grad":
            self.flow._after_requires_grad(st, t, value, self.it.span_of(stmt),
                                           stmt.value if isinstance(stmt, ast.Assign) else None)
        elif attr == "grad":
            if isinstance(value, TensorV):
                self.flow.manual_grads.add(t.tid)
                self.flow.note_zeroed(st)
            else:
                # `p.grad = None` (a hand-written zeroing loop): a zeroing site like `zero_grad()`, so
                # GW725 can name it when it clears only some of what an optimizer steps
                self.flow.note_zeroed(st, self.it.span_of(stmt), self.it.text_of(stmt).strip())
        elif attr == "data":
            self.flow.shapes.pop(t.tid, None)

    def tensor_getitem(self, t: TensorV, sub: Optional[ast.Subscript], st: State, node: Optional[ast.AST]) -> Value:
        out = super().tensor_getitem(t, sub, st, node)
        if not isinstance(out, TensorV) or out.tid == t.tid:
            return out
        if t.tid in self.flow.unknown_derived:
            self.flow.unknown_derived.add(out.tid)
            return out
        oi = st.t.get(out.tid)
        if oi is not None and oi.rg is False and out.tid not in self.flow.cuts:
            ti = st.t.get(t.tid)
            if not st.grad_enabled and ti is not None and ti.rg is not False:
                self.flow.cuts[out.tid] = c = self.flow._nograd_cut(st, [t], self.it.span_of(node) if node is not None else None)
                self.flow.reach.note_cut(st, c, [t])
            elif t.tid in self.flow.cuts:
                self.flow.cuts[out.tid] = self.flow.cuts[t.tid]
        if sub is not None:
            index = self.flow.basic_index(sub.slice, st)
            if index is not None:
                self.flow.slices[out.tid] = (t.tid, index)
                shape = fs.getitem(self.flow.shapes.get(t.tid), list(index))
                if shape is not None:
                    self.flow.shapes[out.tid] = shape
                if t.tid in self.flow.noncontig or not _leading_slice(index):
                    self.flow.noncontig.add(out.tid)
            else:
                self.flow.noncontig.add(out.tid)
        return out

    def tensor_setitem(self, t: TensorV, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        self.it.viewchecks.check_setitem(st, t, target, value, stmt)
        super().tensor_setitem(t, target, value, st, stmt)
        others = self.it.graph.slot_tensors(st, value)
        self.flow._after_inplace(st, t, others, self.flow._hiding(value, st), "__setitem__")

    def tensor_inplace_binop(self, cur: TensorV, op: ast.operator, rhs: Value, st: State, stmt: ast.AugAssign) -> None:
        super().tensor_inplace_binop(cur, op, rhs, st, stmt)
        others = self.it.graph.slot_tensors(st, rhs)
        self.flow._after_inplace(st, cur, others, self.flow._hiding(rhs, st), "__iadd__")
        self.flow._with_numbers(st, cur, [rhs])

    def indexed_write_is_silent(self, t: TensorV, sl: ast.expr, st: State) -> Optional[bool]:
        return self.it.viewchecks.indexed_write_is_silent(t, sl, st)  # the broadcast dims of expand outputs


class FlowModules(Modules):
    """The flow layer over modules: buffers, constructor arguments (for shapes),
    requires_grad_(), zero_grad()."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    # ------------------------------------------------------------------ modules and optimizers
    def construct_torch_module(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = super().construct_torch_module(qual, args, kwargs, st, node)
        if isinstance(obj, ObjV):
            for slot, v in st.attrs(obj.oid).items():
                if isinstance(v, TensorV) and (slot.startswith("running_") or slot == "num_batches_tracked"):
                    self.flow.cuts[v.tid] = DATA  # running statistics are buffers: never part of a graph
            self.flow.mod_ctor[obj.oid] = (qual.rsplit(".", 1)[-1], [self.flow._py(a, st) for a in args],
                                           {k: self.flow._py(v, st) for k, v in kwargs.items()})
            if self.it.call_spans:
                chain = tuple(self.it.call_spans)
                for v in st.attrs(obj.oid).values():
                    if isinstance(v, TensorV) and st.t[v.tid].param:
                        self.flow.param_chains[v.tid] = chain
        return obj

    def call_object(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                    site: Optional[Span] = None) -> Value:
        seq0 = st.seq
        out = super().call_object(obj, args, kwargs, st, node, site)
        attrs = st.attrs(obj.oid)
        if "__opaque__" in attrs or self._hides_module(obj, st) and not self._block_on_graph(obj, args, kwargs, out, st):
            self.flow._after_call(out, st, seq0, True, [])
            return out
        ctor = self.flow.mod_ctor.get(obj.oid)
        if ctor is not None and isinstance(out, TensorV) and out.tid not in self.flow.shapes and not self.it.standalone:
            try:
                shape = module_shape(ctor[0], ctor[1], ctor[2], [self.flow._py(a, st) for a in args],
                                     {k: self.flow._py(v, st) for k, v in kwargs.items()})
            except (TypeError, ValueError, IndexError):
                shape = None
            if shape is not None:
                self.flow.shapes[out.tid] = shape
        return out

    def _block_on_graph(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], out: Value, st: State) -> bool:
        """A transformer block of torch (``nn.TransformerEncoder``/``Layer``, the decoder's) called on
        tensors that require grad: its graph takes in exactly those inputs and the block's own
        parameters (the masks are constants), so the backward through it is followed whole. On
        inputs that do not require grad the block's output may still (its parameters, which the
        analysis does not list), and it stays open."""
        q = st.attrs(obj.oid).get("__torch__")
        if not isinstance(q, ConstV) or str(q.value).rsplit(".", 1)[-1] not in TRANSFORMER_BLOCKS:
            return False
        inputs = [a for a in args if isinstance(a, TensorV)]
        if not inputs or any(isinstance(v, TensorV) for v in kwargs.values()) or not isinstance(out, TensorV):
            return False
        infos = [st.t.get(t.tid) for t in inputs + [out]]
        return all(i is not None and i.rg is True for i in infos)

    def _hides_module(self, obj: ObjV, st: State) -> bool:
        """A torch module whose call may run parameters we do not see: a wrapper the op table
        does not know (``DistributedDataParallel(model)``), a container with unknown children."""
        attrs = st.attrs(obj.oid)
        q = attrs.get("__torch__")
        if not isinstance(q, ConstV) or "__class__" in attrs:
            return False
        short = str(q.value).rsplit(".", 1)[-1]
        if short == "Sequential":
            kids = attrs.get("__children__")
            return not isinstance(kids, SeqV) or kids.kind == "homogeneous" or any(
                not isinstance(k, ObjV) for k in st.lists.get(kids.lid, ()))
        if short in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity"):
            return False
        return optable.lookup_module(str(q.value)) is None

    def module_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                      node: ast.AST) -> Value:
        out = super().module_method(obj, name, args, kwargs, st, node)
        if name == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad", TRUE)
            span = self.it.span_of(node)
            flag_node = node.args[0] if isinstance(node, ast.Call) and node.args else None
            for _, p in self.module_params(obj, st):
                self.flow._after_requires_grad(st, p, flag, span, flag_node)
        elif name == "zero_grad":
            self.flow.note_zeroed(st, self.it.span_of(node), self.it.text_of(node.func) if isinstance(node, ast.Call) else "")
        return out


class FlowOptimizers(Optimizers):
    """The flow layer over optimizers: where each was built, its parameters and step() checked."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def construct_optimizer(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        obj = super().construct_optimizer(qual, args, kwargs, st, node)
        if isinstance(obj, ObjV):
            self.flow.opt_sites[obj.oid] = self.it.span_of(node)
            # ids are handed out in order: a parameter with a larger id was made after this optimizer
            self.flow.opt_built_id[obj.oid] = fresh_id()
            self.flow.opt_chains[obj.oid] = (tuple(self.it.call_spans), st.loop_ctx)
            arg = node.args[0] if isinstance(node, ast.Call) and node.args and self.it.foreign_stack else None
            if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters" \
                    and not arg.args and isinstance(arg.func.value, ast.Name):
                # `SGD(model.parameters())` in a helper of another module: the model it was given whole
                # (the check of a module attached later, checks/reach.py, reads it there)
                model = st.lookup(arg.func.value.id)
                if isinstance(model, ObjV) and self.it.modules.is_module_obj(model, st):
                    self.flow.opt_models[obj.oid] = model
            self.it.training.check_optimizer_params(st, obj, node)
            self.flow.reach.groups.note_built(st, obj, node)  # filtered groups with a hole (checks/groups.py)
        return obj

    def optimizer_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        if name == "step":
            self.it.training.check_step(st, obj, node)
        out = super().optimizer_method(obj, name, args, kwargs, st, node)
        if name == "zero_grad":
            self.flow.note_zeroed(st, self.it.span_of(node), self.it.text_of(node.func) if isinstance(node, ast.Call) else "")
        return out


class FlowCustomFunctions(CustomFunctions):
    """The flow layer over custom Functions: outputs marked
    non-differentiable, views made without grad tracking, backwards that ignore their gradient."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def ctx_method(self, ctx: ObjV, name: str, args: List[Value], st: State, node: ast.AST) -> Value:
        if name == "save_for_backward":
            self.check_saved_values(args, node)
        return super().ctx_method(ctx, name, args, st, node)

    def check_saved_values(self, args: List[Value], node: ast.AST) -> None:
        """GW738: a Python value (a number, a string, a tuple of them) given to ``save_for_backward``:
        ``apply`` raises TypeError once ``forward`` returns (measured: None is accepted)."""
        call = node if isinstance(node, ast.Call) else None
        for i, v in enumerate(args):
            what = None
            if isinstance(v, ConstV) and v.value is not None and not isinstance(v.value, Span):
                what = type(v.value).__name__
            elif v.__class__ is NumberV:
                what = "a Python number"
            if what is None:
                continue
            arg = call.args[i] if call is not None and i < len(call.args) else None
            if arg is None or isinstance(arg, ast.Starred):
                return
            fn = self.it.call_stack[-1].name if self.it.call_stack else "Function"
            cls = next((c.name for c in ast.walk(self.it.tree) if isinstance(c, ast.ClassDef)
                        and any(f is self.it.call_stack[-1] for f in c.body)), None) if self.it.call_stack else None
            self.it.emit(Event("save_non_tensor", self.it.span_of(arg), {
                "what": f"`{ast.unparse(arg)}` ({'an' if what[0] in 'aeiou' else 'a'} {what})"
                        if what != "a Python number" else f"`{ast.unparse(arg)}` ({what})",
                "position": i, "fn": cls or fn,
                "name": arg.id if isinstance(arg, ast.Name) else "value"}))
            return

    def output_marked_nondiff(self, st: State, out: TensorV, where: Span) -> None:
        self.flow.cuts[out.tid] = self.flow._cut_here("marked", where, "`ctx.mark_non_differentiable`")

    def input_without_gradient(self, st: State, node: Any, tensors: Sequence[TensorV], where: Span, fn: str) -> None:
        """``return grad_x, None`` for a parameter handed to ``Fn.apply``: a cut of that parameter's
        path, used by every backward through the node (GW719 when nothing else reaches it)."""
        c = self.flow._cut_here("none_grad", where, f"the `None` that `{fn}.backward` returns for it")
        self.flow.reach.note_cut(st, c, tensors)
        if c in self.flow.reach.sources:
            self.flow.reach.operand_cuts[node.id] = (f"{fn}Backward", ((c, where, False),))

    def custom_function_view(self, st: State, out: TensorV, fn: str, span: Span) -> None:
        """``Fn.apply(x)`` whose forward returns ``x`` as-is, with no input requiring grad:
        autograd makes the output a view created without grad tracking, which a write of a
        value requiring grad cannot rebase."""
        self.flow.nograd_views[out.tid] = (span, True, False, fn)

    def check_function_class(self, info: Any) -> None:
        super().check_function_class(info)
        self.it.training.check_backward_uses_grad(info)
        check_gradient_order(self.it, info)  # GW723 (engine/checks/gradorder.py)


# builtins whose result keeps the items of their argument: a copy made before a hook overwrites them
COPYING_BUILTINS = frozenset(("dict", "list", "tuple", "sorted", "copy.copy", "copy.deepcopy",
                              "collections.OrderedDict", "OrderedDict"))


class FlowBuiltins(Builtins):
    """The flow layer over builtins: numbers taken from tensors (float(), sum() of numbers ...)."""

    def __init__(self, it: Any) -> None:
        super().__init__(it)
        self.flow = it.flow  # the flow facts (built first: engine/assembly.py)

    def call_seq_method(self, seq: Value, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                        node: ast.AST) -> Value:
        if name == "__setitem__" and len(args) == 2 and getattr(self.it, "hook_depth", 0) \
                and isinstance(args[0], ConstV) and isinstance(args[0].value, (str, int)):
            self.flow.hooks.note_store(st, seq, args[0].value, args[1], node)  # GW721, as `acts[k] = v`
        return super().call_seq_method(seq, name, args, kwargs, st, node)

    def call_builtin(self, name: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if name in ("sum", "min", "max") and len(args) == 1 and isinstance(args[0], SeqV):
            items = st.lists.get(args[0].lid, ())
            if items and all(isinstance(x, NumberV) for x in items):
                cuts = [x.cut for x in items if isinstance(x, NumberV) and x.cut is not None]
                return NumberV(cuts[0] if cuts else None)  # numbers in, a number out
        if self.flow.hooks.stored and name in COPYING_BUILTINS and args:
            self.flow.hooks.note_read(args[0])  # `fake = dict(feats)`: the values a hook kept, copied
        out = super().call_builtin(name, args, kwargs, st, node)
        if isinstance(out, UnknownV) and not isinstance(out, NumberV):
            if name in ("float", "int", "bool", "round") and args and isinstance(args[0], TensorV):
                info = st.t.get(args[0].tid)
                rg = info.rg if info is not None else None
                if rg is False:
                    return NumberV(self.flow.cuts.get(args[0].tid))
                cut = self.flow._cut_here("item", self.it.span_of(node), f"`{name}()`")
                self.flow.reach.note_cut(st, cut, [args[0]])
                return NumberV(cut)
            if name in ("float", "int", "round", "abs", "min", "max", "sum") and args and all(
                    isinstance(a, (NumberV, ConstV)) for a in args):
                cuts = [a.cut for a in args if isinstance(a, NumberV) and a.cut is not None]
                return NumberV(cuts[0] if cuts else None)
            if name == "len":
                return PLAIN_NUMBER
        return out
