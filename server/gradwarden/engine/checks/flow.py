"""Gradient flow over the abstract state: which tensors certainly do not require grad (and
where their gradient path was cut), which are certainly not scalars, which are leaves,
views made under ``no_grad`` — and the checks PyTorch makes on them.

``FlowMixin`` sits in front of the autograd and torch semantics (``AutogradMixin``,
``TorchMixin``) in the interpreter's bases and wraps their entry points with ``super()``:
the semantics stay theirs, this module only *observes* what they produce (it records facts
in side tables keyed by tensor id) and reports. It never changes what an op does, with two
exceptions that correct the model where torch's behaviour is measured: ``torch.as_tensor(t)``
returns ``t`` itself, and an ``unfold`` view is not an expanded tensor (writes into it do not
raise; overlapping windows silently share elements).

The facts are conservative: a tensor has a ``Cut`` only when every value it was computed
from is accounted for; an argument the analysis cannot see into makes the cut unsure
(information) or unknown (silent). Stay silent when in doubt — see docs/rules.md, GW7xx.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.domain import flowshape as fs
from gradwarden.engine.domain import optable
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.checks.flowfacts import DATA, PLAIN_NUMBER, Cut, NumberV, join_cuts, unsure
from gradwarden.engine.domain.flowops import PAIR_METHODS, UNK, T, function_shape, method_shape, module_shape, pair_shape
from gradwarden.engine.state.model import (
    NONE, TRUE, UNKNOWN, ConstV, DictV, ObjV, RefV, SeqV, State, TensorV, UnknownV, Value, walk_nodes,
)

VALUE_METHODS = frozenset({"item", "tolist", "numpy", "__float__", "__int__", "__bool__"})
META_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "stride", "data_ptr", "is_contiguous",
                          "element_size", "__len__", "get_device", "storage_offset", "is_floating_point",
                          "is_complex"})
META_ATTRS = frozenset({"shape", "ndim", "device", "dtype", "is_cuda", "layout"})
LAYOUT = frozenset({"t", "T", "mT", "transpose", "permute", "swapaxes", "swapdims", "movedim", "adjoint", "mH", "H"})
SHAPE_CHANGING_INPLACE = frozenset({"resize_", "resize_as_", "squeeze_", "unsqueeze_", "t_", "transpose_",
                                    "as_strided_", "set_", "swapaxes_", "swapdims_"})
CHECKPOINT = ("torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
MOVES = frozenset({"to", "cuda", "cpu", "type", "type_as", "double", "half", "bfloat16"})
# torch calls that build a tensor from the values of their first argument
DATA_CTORS = frozenset({"tensor", "as_tensor", "asarray", "from_numpy", "Tensor", "FloatTensor", "DoubleTensor",
                        "LongTensor", "IntTensor", "BoolTensor", "HalfTensor", "ByteTensor", "frombuffer"})
# methods whose other tensor arguments lend only a dtype, a device or a shape (never a graph)
SHAPE_ONLY_ARGS = frozenset({"to", "type", "type_as", "view_as", "reshape_as", "expand_as", "new_zeros", "new_ones",
                             "new_empty", "new_full", "new_tensor", "cuda", "cpu"})
_GRADMODE_OFF = ("no_grad", "inference_mode")
_JOINS = ("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack",
          "torch.dstack")
_FROM_PRETRAINED = ("torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained",
                    "torch.nn.modules.sparse.Embedding.from_pretrained")

_CAPABLE: Dict[Tuple[str, str], Optional[Tuple[frozenset, frozenset, bool]]] = {}


def _capable(kind: str, name: str) -> Optional[Tuple[frozenset, frozenset, bool]]:
    """Which arguments of a torch op can be tensors (positions without self, keyword names,
    and whether varargs can): from the op table's schemas. None: op unknown."""
    key = (kind, name)
    if key in _CAPABLE:
        return _CAPABLE[key]
    table = optable._table()
    recs = None
    if kind == "method":
        recs = table.get("methods", {}).get(name)
    else:
        recs = table.get("functions", {}).get(name)
        if recs is None:
            alias = table.get("function_aliases", {}).get(name)
            recs = table.get("functions", {}).get(alias) if alias else None
    if not recs:
        _CAPABLE[key] = None
        return None
    pos: Set[int] = set()
    kws: Set[str] = set()
    var = False
    data_arg = name.rsplit(".", 1)[-1] in ("tensor", "as_tensor", "asarray", "Tensor")
    for rec in recs:
        i = 0
        for part in (rec.get("p") or "").split(","):
            if not part:
                continue
            kwonly = part.startswith("*")
            part = part.lstrip("*")
            pname, _, pkind = part.partition(":")
            base = pkind.rstrip("?+")
            tensorish = base in ("T", "L") or (base == "O" and data_arg)
            if tensorish:
                kws.add(pname)
                if not kwonly:
                    pos.add(i)
                    if pkind.endswith("+"):
                        var = True
            if not kwonly:
                i += 1
    out = (frozenset(pos), frozenset(kws), var)
    _CAPABLE[key] = out
    return out


class FlowMixin:
    # ------------------------------------------------------------------ setup
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[call-arg]
        self._init_flow()

    def _init_flow(self) -> None:
        self.cuts: Dict[int, Cut] = {}  # tid -> why it certainly does not require grad
        self.shapes: Dict[int, Any] = {}  # tid -> shape (engine/domain/flowshape.py)
        self.open_nodes: Set[int] = set()  # nodes whose graph may take inputs we cannot see
        self.fake_leaves: Set[int] = set()  # leaves that stand for a graph we do not follow
        self.retained: Set[int] = set()  # retain_grad() called
        self.maybe_leaf: Dict[int, Span] = {}  # `.to(device)` of a leaf: maybe the leaf itself
        self.explicit_dtype: Set[int] = set()
        self.explicit_device: Set[int] = set()
        self.rewrapped: Dict[int, Cut] = {}  # a leaf that requires grad, made from a cut value
        # views made under no_grad: tid -> (where, surely a view, its base requires grad, what made it).
        # A write with grad on raises when the base requires grad, else when the value written does.
        self.nograd_views: Dict[int, Tuple[Span, bool, bool, str]] = {}
        self.views: Dict[int, bool] = {}  # tid -> certainly a view (False: maybe, reshape)
        self.unfold_views: Dict[int, Tuple[Span, Optional[bool]]] = {}  # unfold windows (overlapping?)
        self.slices: Dict[int, Tuple[int, Tuple[Any, ...]]] = {}  # view -> (parent tid, its basic index)
        self.layouts: Dict[int, int] = {}  # re-laid-out view -> parent tid
        self.noncontig: Set[int] = set()
        self.grad_owner: Dict[int, int] = {}  # `.grad` tensor -> the tensor it belongs to
        self.zeroed_loops: Set[int] = set()  # loop ids inside which gradients were zeroed
        self.manual_grads: Set[int] = set()  # `.grad = ...` assigned
        self.mod_ctor: Dict[int, Tuple[str, List[Any], Dict[str, Any]]] = {}
        self.opt_sites: Dict[int, Span] = {}
        self.with_stack: List[List[Any]] = []  # [span, disables grad]
        self.global_nograd: Optional[Span] = None  # torch.set_grad_enabled(False) as a statement
        self._cmp_stack: List[List[TensorV]] = []
        self._if_index: Optional[List[Tuple[str, Tuple[int, int], Tuple[int, int], int]]] = None
        self.pending_accum: List[Tuple[int, Event]] = []  # (loop id, event) decided at the end
        self.unknown_derived: Set[int] = set()  # tensors computed from an argument of unknown origin
        self.dtypes: Dict[int, str] = {}  # tid -> "bool" | "int" | "float", where the code says
        self.inference: Dict[int, Span] = {}  # tid -> the inference_mode region that made it
        self.inference_reported = False
        # tensor creation is a hot path: look for inference regions only in files that have one
        self.mentions_inference = "inference_mode" in self.src.text  # type: ignore[attr-defined]
        self.own_requires_grad: Optional[bool] = None  # flowchecks._defines_requires_grad, once per file
        self.plain_reported: Set[int] = set()  # optimizers already reported by GW716
        self.attr_unfreeze: Dict[int, Span] = {}  # param tid -> `module.requires_grad = True` that missed it

    def run(self) -> List[Event]:
        super().run()  # type: ignore[misc]
        for lid, ev in self.pending_accum:
            if lid not in self.zeroed_loops:
                self.emit(ev)  # type: ignore[attr-defined]
        self.pending_accum = []
        return list(self.events.values())  # type: ignore[attr-defined]

    # ================================================================== helpers
    def _hides_tensor(self, v: Value, st: State, depth: int = 0) -> bool:
        """Could ``v`` be, or contain, a tensor the analysis does not follow?"""
        if isinstance(v, (ConstV, TensorV, NumberV)):
            return False
        if isinstance(v, RefV):
            return v.kind not in ("torch", "module")
        if isinstance(v, SeqV):
            if depth > 2:
                return True
            return any(self._hides_tensor(x, st, depth + 1) for x in st.lists.get(v.lid, ())[:16])
        if isinstance(v, DictV):
            if depth > 2:
                return True
            return any(self._hides_tensor(x, st, depth + 1) for _, x in st.dicts.get(v.did, ())[:16])
        if isinstance(v, ObjV):
            return "__gradmode__" not in st.attrs(v.oid)
        return True  # UnknownV

    def _opaque(self, kind: str, name: str, args: Sequence[Value], kwargs: Dict[str, Value], st: State) -> bool:
        if not args and not kwargs:
            return False
        caps = _capable(kind, name)
        for i, a in enumerate(args):
            if self._hides_tensor(a, st) and (caps is None or i in caps[0] or caps[2]
                                              or isinstance(a, (ObjV, RefV))):
                return True
        for k, a in kwargs.items():
            if k == "out":
                continue
            if self._hides_tensor(a, st) and (caps is None or k in caps[1] or isinstance(a, (ObjV, RefV))):
                return True
        return False

    def _py(self, v: Value, st: State, depth: int = 0) -> Any:
        """A call argument as a plain Python value for the shape rules."""
        if isinstance(v, ConstV):
            return v.value
        if isinstance(v, TensorV):
            return T(self.shapes.get(v.tid))
        if isinstance(v, SeqV) and v.kind != "homogeneous" and depth < 3:
            return tuple(self._py(x, st, depth + 1) for x in st.lists.get(v.lid, ()))
        if isinstance(v, RefV) and v.kind == "torch":
            return "torch:" + v.name
        return UNK

    def _tensor_cut(self, st: State, t: TensorV) -> Optional[Cut]:
        info = st.t.get(t.tid)
        if info is None or info.rg is not False:
            return None
        return self.cuts.get(t.tid)

    def _inputs_cut(self, st: State, tensors: Sequence[TensorV]) -> Optional[Cut]:
        return join_cuts(self._tensor_cut(st, t) for t in tensors)

    def _region(self, st: State) -> Optional[Span]:
        """The `with torch.no_grad()` / decorator / set_grad_enabled(False) now in force."""
        for span, off in reversed(self.with_stack):
            if off:
                return span
        for fdef in reversed(self.call_stack):
            site = _nograd_decorator(fdef)
            if site is not None:
                return self.span_of(site)
        return self.global_nograd

    def _nograd_cut(self, st: State, tensors: Sequence[TensorV], span: Optional[Span], what: str = "") -> Cut:
        inherited = self._inputs_cut(st, tensors)
        if inherited is not None and inherited.kind == "data" and inherited.sure and all(
                st.t[t.tid].rg is False for t in tensors if t.tid in st.t):
            return inherited
        region = self._region(st)
        return Cut("nograd", span, what or "`torch.no_grad()`", sure=region is not None,
                   stack=tuple(self.call_spans), region=region)

    def _cut_here(self, kind: str, span: Optional[Span], what: str, sure: bool = True, origin: Optional[Cut] = None) -> Cut:
        return Cut(kind, span, what, sure=sure, stack=tuple(self.call_spans), origin=origin)

    def _frame_span(self, stack: Tuple[Span, ...], span: Optional[Span]) -> Optional[Span]:
        """Where, in the frame now running, something recorded at ``span`` (reached through
        the calls ``stack``) happened: the call in this frame that led to it."""
        depth = len(self.call_spans)
        if len(stack) > depth and tuple(stack[:depth]) == tuple(self.call_spans):
            return stack[depth]
        return span

    def _node_frame_span(self, info: Any) -> Optional[Span]:
        n = info.grad_fn
        if n is None:
            return info.created
        return self._frame_span(n.stack, n.call_span or n.span)

    # ================================================================== wrapped semantics
    def unknown_tensor(self, st: State, name: str, rg: Optional[bool] = None) -> TensorV:
        t = super().unknown_tensor(st, name, rg)  # type: ignore[misc]
        self.unknown_derived.add(t.tid)
        return t

    def output_marked_nondiff(self, st: State, out: TensorV, where: Span) -> None:
        self.cuts[out.tid] = self._cut_here("marked", where, "`ctx.mark_non_differentiable`")

    def apply_op(self, st: State, info: Any, slots: Sequence[Value], span: Span, opname: str, **kw: Any) -> List[TensorV]:
        outs = super().apply_op(st, info, slots, span, opname, **kw)  # type: ignore[misc]
        ins: List[TensorV] = []
        for v in slots:
            if v.__class__ is TensorV:
                ins.append(v)  # type: ignore[arg-type]
            else:
                ins.extend(self.slot_tensors(st, v))  # type: ignore[attr-defined]
        derived = self.unknown_derived
        if derived:
            for t in ins:
                if t.tid in derived:
                    derived.update(o.tid for o in outs)
                    break
        hidden: Optional[bool] = None
        for k, o in enumerate(outs):
            oi = st.t.get(o.tid)
            if oi is None or oi.rg is not False or o.tid in self.cuts:
                continue
            if hidden is None:
                # an operand we cannot see may carry a graph; no tensor operand at all (an op
                # over a list the analysis believes empty) says nothing either: unknown
                hidden = not ins or any(self._hides_tensor(v, st) for v in slots)
            if hidden:
                return outs
            if not st.grad_enabled:
                self.cuts[o.tid] = self._nograd_cut(st, ins, span)
                continue
            nondiff = info is not None and (not info.differentiable or k in info.nondiff_outputs)
            if nondiff and any(st.t[t.tid].rg is not False for t in ins if t.tid in st.t):
                self.cuts[o.tid] = self._cut_here("nondiff", span, f"`{opname}`")
                continue
            c = self._inputs_cut(st, ins)
            if c is not None:
                self.cuts[o.tid] = c
        return outs

    def alias_tensor(self, st: State, src: TensorV, *, kind: str, span: Optional[Span], rg: Optional[bool],
                     grad_fn: Any, opname: str = "") -> TensorV:
        out = super().alias_tensor(st, src, kind=kind, span=span, rg=rg, grad_fn=grad_fn,  # type: ignore[misc]
                                   opname=opname)
        if out.tid == src.tid:
            return out
        if src.tid in self.inference:
            self.inference[out.tid] = self.inference[src.tid]  # a view of an inference tensor is one too
        si = st.t.get(src.tid)
        if si is None:
            return out
        if src.tid in self.unknown_derived:
            self.unknown_derived.add(out.tid)
            return out  # a view of something unknown (maybe not even a tensor): no facts
        if kind == "detach":
            if si.rg is False:
                c = self.cuts.get(src.tid)
                if c is not None:
                    self.cuts[out.tid] = c
            else:
                self.cuts[out.tid] = self._cut_here("detach", span, "`.detach()`")
            if src.tid in self.shapes:
                self.shapes[out.tid] = self.shapes[src.tid]
            return out
        oi = st.t.get(out.tid)
        if oi is not None and oi.rg is False:
            if not st.grad_enabled and si.rg is not False:
                self.cuts[out.tid] = self._nograd_cut(st, [src], span)
            elif src.tid in self.cuts and si.rg is False:
                self.cuts[out.tid] = self.cuts[src.tid]
        if src.tid in self.dtypes:
            self.dtypes[out.tid] = self.dtypes[src.tid]
        view_kind = kind in ("view", "multi_view", "expand")
        if view_kind or kind == "may_alias":
            self.views[out.tid] = view_kind
            if not st.grad_enabled and si.rg is not None and span is not None:
                # only where the user disabled grad: inside a custom Function's forward the
                # view is a custom-Function view instead (GW305)
                if self._region(st) is not None:
                    self.nograd_views[out.tid] = (span, view_kind, si.rg is True, "")
            elif src.tid in self.nograd_views:
                vs, sure, base_rg, what = self.nograd_views[src.tid]
                self.nograd_views[out.tid] = (vs, sure and view_kind, base_rg, what)
            if src.tid in self.unfold_views and view_kind:
                self.unfold_views[out.tid] = self.unfold_views[src.tid]
        return out

    def new_tensor(self, st: State, *, rg: Optional[bool] = False, node: Any = None, name: str = "",
                   param: bool = False, grad_fn: Any = None, dtype: Optional[str] = None,
                   created: Optional[Span] = None) -> TensorV:
        t = super().new_tensor(st, rg, node, name, param, grad_fn, dtype, created)  # type: ignore[misc]
        if not st.grad_enabled and self.mentions_inference:
            region = self._inference_region(st)
            if region is not None:
                self.inference[t.tid] = region
        return t

    def _inference_region(self, st: State) -> Optional[Span]:
        """The `torch.inference_mode()` block or decorator now in force, if that is what
        turned gradients off (tensors made there are inference tensors)."""
        region = self._region(st)
        if region is None or self.foreign_stack:  # type: ignore[attr-defined]
            return None
        return region if "inference_mode" in self.src.line(region.row) else None  # type: ignore[attr-defined]

    def make_node(self, st: State, opname: str, span: Span, inputs: Sequence[TensorV], saved: Any, seq: int, *,
                  report_span: Optional[Span] = None, call_span: Optional[Span] = None, custom: Any = None,
                  opaque: bool = False) -> Any:
        if self.inference and st.grad_enabled and not self.inference_reported:
            self.check_inference_saved(st, opname, span, inputs, saved)
        node = super().make_node(st, opname, span, inputs, saved, seq, report_span, call_span,  # type: ignore[misc]
                                 custom, opaque)
        open_nodes = self.open_nodes
        t_of = st.t
        for t in inputs:
            ti = t_of.get(t.tid)
            if ti is None:
                continue
            if t.tid in self.fake_leaves or (ti.grad_fn is None and (ti.rg is None or (ti.rg and not ti.leaf))):
                open_nodes.add(node.id)
                return node
        if open_nodes:
            for p in node.inputs:
                if p.id in open_nodes:
                    open_nodes.add(node.id)
                    break
        return node

    def _after_call(self, out: Value, st: State, seq0: int, opaque: bool, inputs: Sequence[TensorV]) -> None:
        """Facts every torch call shares: an argument we cannot see into makes the result's
        cut unsure and its node open."""
        if not isinstance(out, TensorV):
            if isinstance(out, SeqV):
                for x in st.lists.get(out.lid, ())[:8]:
                    if isinstance(x, TensorV):
                        self._after_call(x, st, seq0, opaque, inputs)
            return
        oi = st.t.get(out.tid)
        if oi is None:
            return
        if opaque:
            if out.tid in self.cuts:
                self.cuts[out.tid] = unsure(self.cuts[out.tid])  # type: ignore[assignment]
            if oi.grad_fn is not None and oi.grad_fn.seq > seq0:
                self.open_nodes.add(oi.grad_fn.id)

    # ------------------------------------------------------------------ torch.* calls
    def call_torch(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        short = qual.rsplit(".", 1)[-1]
        if qual in ("torch.as_tensor", "torch.asarray") and args and isinstance(args[0], TensorV):
            moves = {k: v for k, v in kwargs.items() if k in ("dtype", "device")}
            if not moves:
                return args[0]  # measured: as_tensor(t) is t itself (keeps its graph)
            return self.call_tensor_method(args[0], "to", [], moves, st, node)  # type: ignore[attr-defined]
        if qual in _JOINS and args and isinstance(args[0], SeqV) and not st.lists.get(args[0].lid):
            # torch.cat([]) raises: a program that goes on filled the list where we cannot see
            return self.unknown_tensor(st, qual.rsplit(".", 1)[-1], rg=None)
        if qual in _FROM_PRETRAINED:
            return self._from_pretrained(qual, args, kwargs, st, node)
        if qual in ("torch.autograd.Variable", "torch.autograd.variable.Variable") and args and \
                isinstance(args[0], TensorV):
            if self.truth_of(kwargs.get("requires_grad", ConstV(False))) is True:  # type: ignore[attr-defined]
                t = self.new_tensor(st, rg=True, node=node)  # type: ignore[attr-defined]
                c = self._tensor_cut(st, args[0])
                if c is not None and c.kind != "data":
                    self.rewrapped[t.tid] = c
                return t
            return args[0]
        if qual in {"torch.device", "torch.dtype", "torch.Size", "torch.finfo", "torch.iinfo", "torch.get_default_dtype",
                    "torch.cuda.is_available", "torch.cuda.device_count", "torch.backends.mps.is_available"}:
            return PLAIN_NUMBER  # a device, dtype or size: never a tensor
        ck = qual in CHECKPOINT and self.check_checkpoint(qual, args, kwargs, st, node)
        if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and \
                getattr(node, "_gw_statement", False):
            mode = args[0] if args else kwargs.get("mode")
            if isinstance(mode, ConstV) and mode.value is False:
                self.global_nograd = self.span_of(node)  # type: ignore[attr-defined]
            elif isinstance(mode, ConstV) and mode.value is True:
                self.global_nograd = None
        seq0 = st.seq
        out = super().call_torch(qual, args, kwargs, st, node)  # type: ignore[misc]
        if not isinstance(out, (TensorV, SeqV)):
            return out
        if isinstance(out, SeqV) and short in PAIR_METHODS and args and isinstance(args[0], TensorV):
            self._pair_shapes(st, out, short, self.shapes.get(args[0].tid), args[1:], kwargs)
        span = self.span_of(node)  # type: ignore[attr-defined]
        tensors = [x for a in list(args) + list(kwargs.values()) for x in self.slot_tensors(st, a)]  # type: ignore[attr-defined]
        if any(x.tid in self.unknown_derived for x in tensors):
            self._derive(out, st)
        if isinstance(out, TensorV):
            oi = st.t.get(out.tid)
            if oi is not None and oi.grad_fn is None and oi.created == span and out.tid not in self.cuts and (
                    not tensors or short in DATA_CTORS or short.endswith("_like")):
                self._fresh_tensor(qual, short, out, args, kwargs, st, span)  # a factory's new leaf
            if oi is not None and out.tid not in self.shapes and not self.standalone:
                functional = qual.startswith("torch.nn.functional.")
                try:
                    shape = function_shape(short, [self._py(a, st) for a in args],
                                           {k: self._py(v, st) for k, v in kwargs.items()}, functional)
                except (TypeError, ValueError, IndexError):
                    shape = None
                if shape is not None:
                    self.shapes[out.tid] = shape
            if "dtype" in kwargs:
                self.explicit_dtype.add(out.tid)
            if "device" in kwargs:
                self.explicit_device.add(out.tid)
            kind = _dtype_kind(kwargs.get("dtype"))
            if kind is None and short in ("randint", "arange") and all(
                    isinstance(a, ConstV) and isinstance(a.value, int) for a in args):
                kind = "int"
            if kind is None and short in ("tensor", "as_tensor") and args:
                kind = _literal_kind(self._py(args[0], st))
            if kind is None and short in {"zeros_like", "ones_like", "empty_like", "full_like"} and args and \
                    isinstance(args[0], TensorV) and "dtype" not in kwargs:
                kind = self.dtypes.get(args[0].tid)
            if kind is not None:
                self.dtypes[out.tid] = kind
        if ck and isinstance(out, TensorV) and st.t.get(out.tid) is not None and st.t[out.tid].rg is False:
            # reentrant checkpoint whose inputs do not require grad: its output has no graph, for sure
            self.cuts[out.tid] = self._cut_here("checkpoint", span, "reentrant `checkpoint`")
            return out
        opaque = self._opaque("function", qual, args, kwargs, st) or qual in CHECKPOINT
        self._after_call(out, st, seq0, opaque, tensors)
        return out

    def _from_pretrained(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        """``nn.Embedding.from_pretrained(w)``: a module whose weight is frozen unless
        ``freeze=False`` (torch's default is ``freeze=True``)."""
        obj = self.construct_torch_module(qual.rsplit(".", 1)[0], [], {}, st, node)  # type: ignore[attr-defined]
        if not isinstance(obj, ObjV):
            return obj
        data = args[0] if args else kwargs.get("embeddings", UNKNOWN)
        freeze = self.truth_of(kwargs.get("freeze", args[1] if len(args) > 1 else TRUE))  # type: ignore[attr-defined]
        span = self.span_of(node)  # type: ignore[attr-defined]
        for _, p in self.module_params(obj, st):  # type: ignore[attr-defined]
            if isinstance(data, TensorV) and data.tid in self.shapes:
                self.shapes[p.tid] = self.shapes[data.tid]
            if freeze is False:
                continue
            st.update_t(p.tid, rg=False if freeze is True else None)
            if freeze is True:
                self.cuts[p.tid] = self._cut_here("frozen", span, "`from_pretrained` (which freezes by default)")
        return obj

    def make_parameter(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        p = super().make_parameter(args, kwargs, st, node)  # type: ignore[misc]
        data = args[0] if args else kwargs.get("data")
        if isinstance(p, TensorV) and isinstance(data, TensorV):
            if data.tid in self.shapes:
                self.shapes[p.tid] = self.shapes[data.tid]  # a Parameter wraps the same data
            if data.tid in self.dtypes:
                self.dtypes[p.tid] = self.dtypes[data.tid]
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
                    self.cuts[out.tid] = DATA
                return
            self.cuts[out.tid] = self._cut_here("rewrap", span, f"`{qual.replace('torch.', 'torch.', 1)}(...)`",
                                                sure=origin.sure, origin=origin)
        elif oi.rg is True and origin is not None and origin.kind != "data":
            self.rewrapped[out.tid] = self._cut_here("rewrap", span, f"`{qual}(...)`", origin=origin)

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
                    cuts.append(self.cuts.get(v.tid))
                else:
                    cuts.append(Cut("detach", None, "a copy", sure=True))  # torch.tensor(t): a detached copy
            elif isinstance(v, SeqV) and depth < 3:
                cuts.append(self._value_cut(st.lists.get(v.lid, ())[:32], st, depth + 1))
            else:
                return None
        return join_cuts(cuts)

    # ------------------------------------------------------------------ tensor methods
    def call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        info = st.t.get(t.tid)
        if info is None:
            return super().call_tensor_method(t, name, args, kwargs, st, node, fn_name)  # type: ignore[misc]
        if name == "backward":
            grad = kwargs.get("gradient", args[0] if args else None)
            given = grad is not None and not (isinstance(grad, ConstV) and grad.value is None)
            self.check_backward(st, [t], self.span_of(node), given, "backward")  # type: ignore[attr-defined]
        elif name == "requires_grad_":
            self.check_requires_grad_change(st, t, args[0] if args else kwargs.get("requires_grad", TRUE), node,
                                            method=True)
        elif name == "retain_grad":
            self.retained.add(t.tid)
        elif name in {"detach_", "copy_", "index_put_", "index_put"}:
            self.check_view_method(st, t, name, args, kwargs, node)
        seq0 = st.seq
        rg0 = info.rg
        out = super().call_tensor_method(t, name, args, kwargs, st, node, fn_name)  # type: ignore[misc]
        if t.tid in self.unknown_derived:
            self._derive(out, st)
        span = self.span_of(node)  # type: ignore[attr-defined]
        if name in VALUE_METHODS or name in META_METHODS:
            if isinstance(out, UnknownV):
                if name in META_METHODS:
                    return PLAIN_NUMBER
                cut = self._cut_here("item", span, f"`.{name}()`") if rg0 is not False else self.cuts.get(t.tid)
                return NumberV(cut)
            return out
        inplace = name.endswith("_") and not name.endswith("__")
        values = list(args) + list(kwargs.values()) if kwargs else args
        tensors = [t]
        for a in values:
            if a.__class__ is TensorV:
                tensors.append(a)  # type: ignore[arg-type]
            else:
                tensors.extend(self.slot_tensors(st, a))  # type: ignore[attr-defined]
        opaque = name not in SHAPE_ONLY_ARGS and self._opaque("method", name, args, kwargs, st)
        if inplace:
            self._after_inplace(st, t, tensors[1:], opaque, name)
            self._with_numbers(st, t, values)
            if name == "requires_grad_":
                self._after_requires_grad(st, t, args[0] if args else kwargs.get("requires_grad", TRUE), span)
            if name == "detach_":
                self.cuts[t.tid] = self._cut_here("detach", span, "`.detach_()`") if rg0 is not False else \
                    self.cuts.get(t.tid, DATA)
            return out
        if isinstance(out, SeqV) and name in PAIR_METHODS:
            self._pair_shapes(st, out, name, self.shapes.get(t.tid), args, kwargs)
        if isinstance(out, TensorV) and out.tid != t.tid:
            oi = st.t.get(out.tid)
            if oi is not None and oi.rg is False and out.tid not in self.cuts:
                if name.startswith("new_"):
                    self.cuts[out.tid] = DATA
                elif not st.grad_enabled:
                    self.cuts[out.tid] = self._nograd_cut(st, tensors, span)
                elif rg0 is not False:
                    self.cuts[out.tid] = self._cut_here("nondiff", span, f"`.{name}()`")
                else:
                    c = self._inputs_cut(st, tensors)
                    if c is not None:
                        self.cuts[out.tid] = c
            self._method_facts(st, t, name, args, kwargs, out, span, info)
            self._with_numbers(st, out, values)
        self._after_call(out, st, seq0, opaque, tensors)
        return out

    def _pair_shapes(self, st: State, out: SeqV, name: str, shape: Any, args: Sequence[Value],
                     kwargs: Dict[str, Value]) -> None:
        """The shapes of the ``(values, indices)`` a ``max(dim)``/``sort``/``topk`` returns."""
        if self.standalone:
            return
        try:
            got = pair_shape(name, shape, [self._py(a, st) for a in args], {k: self._py(v, st) for k, v in kwargs.items()})
        except (TypeError, ValueError, IndexError):
            got = None
        if got is None:
            return
        for x in st.lists.get(out.lid, ()):
            if isinstance(x, TensorV) and x.tid not in self.shapes:
                self.shapes[x.tid] = got

    def _with_numbers(self, st: State, t: TensorV, values: Sequence[Value]) -> None:
        """A Python number taken from a tensor (``loss.item()``) and folded into a tensor that
        has no graph: that number's cut is the most telling reason (``total += l.item()``)."""
        cuts = [v.cut for v in values if isinstance(v, NumberV) and v.cut is not None]
        info = st.t.get(t.tid)
        if cuts and info is not None and info.rg is False and t.tid in self.cuts:
            joined = join_cuts([self.cuts[t.tid]] + cuts)
            if joined is not None:
                self.cuts[t.tid] = joined

    def _derive(self, out: Value, st: State) -> None:
        if isinstance(out, TensorV):
            self.unknown_derived.add(out.tid)
        elif isinstance(out, SeqV):
            for x in st.lists.get(out.lid, ())[:16]:
                if isinstance(x, TensorV):
                    self.unknown_derived.add(x.tid)

    def _method_facts(self, st: State, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value],
                      out: TensorV, span: Span, info: Any) -> None:
        # shapes only serve the non-scalar backward check of code run in context; a function
        # analysed on its own has arguments of unknown shape
        if out.tid not in self.shapes and not self.standalone:
            try:
                shape = method_shape(name, self.shapes.get(t.tid), [self._py(a, st) for a in args],
                                     {k: self._py(v, st) for k, v in kwargs.items()})
            except (TypeError, ValueError, IndexError):
                shape = None
            if shape is not None:
                self.shapes[out.tid] = shape
        if name in LAYOUT:
            self.layouts[out.tid] = t.tid
            self.noncontig.add(out.tid)
        elif name in {"expand", "expand_as", "narrow", "diagonal", "as_strided"}:
            self.noncontig.add(out.tid)
        if name == "unfold":
            self.mark_unfold(st, t, out, args, kwargs, span)
        kind = _CAST_KIND.get(name)
        if kind is None and name in ("to", "type") and args:
            kind = _dtype_kind(args[0])
        if kind is None and name in ("to", "type") and "dtype" in kwargs:
            kind = _dtype_kind(kwargs["dtype"])
        if kind is None and name in _SAME_DTYPE and t.tid in self.dtypes:
            kind = self.dtypes[t.tid]
        if kind is not None:
            self.dtypes[out.tid] = kind
        if name in MOVES and info.rg is True and info.grad_fn is None and out.tid != t.tid:
            if not self._certain_copy(st, t, name, args, kwargs):
                self.maybe_leaf[out.tid] = span
            else:
                # certainly a copy (a dtype conversion): a tensor of its own, whose writes
                # never reach the leaf it was made from
                st.update_t(out.tid, counter=out.tid, storage=out.tid)
        if t.tid in self.explicit_dtype and name in {"clone", "detach", "contiguous"}:
            self.explicit_dtype.add(out.tid)

    def _certain_copy(self, st: State, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value]) -> bool:
        """`.double()` of a float32 tensor is a copy (a new non-leaf); `.to(device)` may be the
        tensor itself (same device): only dtype conversions of default-dtype tensors are sure."""
        if name == "cuda":
            return t.tid not in self.explicit_device  # created on the CPU: .cuda() copies
        if name == "to" and t.tid not in self.explicit_device:
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, ConstV) and isinstance(a.value, str) and a.value.startswith("cuda"):
                    return True
        if t.tid in self.explicit_dtype:
            return False
        if name in {"double", "half", "bfloat16"}:
            return True
        if name == "to":
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, RefV) and a.kind == "torch" and a.name.rsplit(".", 1)[-1] in {
                        "float64", "double", "float16", "half", "bfloat16"}:
                    return True
        return False

    def _after_inplace(self, st: State, t: TensorV, others: Sequence[TensorV], opaque: bool, name: str) -> None:
        info = st.t.get(t.tid)
        if info is None:
            return
        if name in SHAPE_CHANGING_INPLACE:
            self.shapes.pop(t.tid, None)
        if info.rg is False and t.tid in self.cuts:
            c = join_cuts([self.cuts[t.tid]] + [self._tensor_cut(st, o) for o in others])
            if c is None:
                self.cuts.pop(t.tid, None)
            else:
                self.cuts[t.tid] = unsure(c) if opaque else c  # type: ignore[assignment]
        if info.grad_fn is not None and opaque:
            self.open_nodes.add(info.grad_fn.id)
        owner = self.grad_owner.get(t.tid)
        if owner is not None:
            self.note_zeroed(st)

    # ------------------------------------------------------------------ attributes, indexing, operators
    def tensor_getattr(self, t: TensorV, attr: str, st: State, node: ast.AST) -> Value:
        if attr == "grad":
            self.check_grad_read(st, t, node)
        out = super().tensor_getattr(t, attr, st, node)  # type: ignore[misc]
        if attr in META_ATTRS:
            return PLAIN_NUMBER if isinstance(out, UnknownV) else out
        if not isinstance(out, TensorV) or out.tid == t.tid:
            return out
        info = st.t.get(t.tid)
        if attr == "grad":
            self.grad_owner[out.tid] = t.tid
        elif attr == "data":
            if t.tid in self.grad_owner:
                self.grad_owner[out.tid] = self.grad_owner[t.tid]
            if info is not None and info.rg is not False:
                self.cuts[out.tid] = self._cut_here("data_attr", self.span_of(node), "`.data`")  # type: ignore[attr-defined]
            elif t.tid in self.cuts:
                self.cuts[out.tid] = self.cuts[t.tid]
            if t.tid in self.shapes:
                self.shapes[out.tid] = self.shapes[t.tid]
        elif attr in {"T", "mT", "mH", "H"}:
            shape = method_shape(attr, self.shapes.get(t.tid), [], {})
            if shape is not None:
                self.shapes[out.tid] = shape
            self.layouts[out.tid] = t.tid
            self.noncontig.add(out.tid)
        return out

    def tensor_setattr(self, t: TensorV, attr: str, value: Value, st: State, target: ast.Attribute,
                       stmt: ast.AST) -> None:
        if attr == "requires_grad":
            self.check_requires_grad_change(st, t, value, stmt, method=False)
        super().tensor_setattr(t, attr, value, st, target, stmt)  # type: ignore[misc]
        if attr == "requires_grad":
            self._after_requires_grad(st, t, value, self.span_of(stmt))  # type: ignore[attr-defined]
        elif attr == "grad":
            if isinstance(value, TensorV):
                self.manual_grads.add(t.tid)
            self.note_zeroed(st)
        elif attr == "data":
            self.shapes.pop(t.tid, None)

    def store_attr(self, obj: Value, attr: str, value: Value, st: State, target: ast.Attribute,
                   stmt: ast.AST) -> None:
        if attr == "requires_grad" and isinstance(obj, ObjV) and self.is_module_obj(obj, st):  # type: ignore[attr-defined]
            self.check_module_requires_grad(st, obj, value, target, stmt)
        super().store_attr(obj, attr, value, st, target, stmt)  # type: ignore[misc]

    def _after_requires_grad(self, st: State, t: TensorV, flag: Value, span: Span) -> None:
        info = st.t.get(t.tid)
        if info is None or info.grad_fn is not None:
            return
        b = self.truth_of(flag)  # type: ignore[attr-defined]
        if b is False:
            self.cuts[t.tid] = self._cut_here("frozen", span, "`requires_grad = False`")
        elif b is True:
            old = self.cuts.pop(t.tid, None)
            if old is not None and old.kind not in ("data", "frozen"):
                self.rewrapped[t.tid] = old
        else:
            self.cuts.pop(t.tid, None)

    def tensor_getitem(self, t: TensorV, sub: Optional[ast.Subscript], st: State, node: Optional[ast.AST]) -> Value:
        out = super().tensor_getitem(t, sub, st, node)  # type: ignore[misc]
        if not isinstance(out, TensorV) or out.tid == t.tid:
            return out
        if t.tid in self.unknown_derived:
            self.unknown_derived.add(out.tid)
            return out
        oi = st.t.get(out.tid)
        if oi is not None and oi.rg is False and out.tid not in self.cuts:
            ti = st.t.get(t.tid)
            if not st.grad_enabled and ti is not None and ti.rg is not False:
                self.cuts[out.tid] = self._nograd_cut(st, [t], self.span_of(node) if node is not None else None)  # type: ignore[attr-defined]
            elif t.tid in self.cuts:
                self.cuts[out.tid] = self.cuts[t.tid]
        if sub is not None:
            index = self.basic_index(sub.slice, st)
            if index is not None:
                self.slices[out.tid] = (t.tid, index)
                shape = fs.getitem(self.shapes.get(t.tid), list(index))
                if shape is not None:
                    self.shapes[out.tid] = shape
                if t.tid in self.noncontig or not _leading_slice(index):
                    self.noncontig.add(out.tid)
            else:
                self.noncontig.add(out.tid)
        return out

    def basic_index(self, sl: ast.expr, st: State) -> Optional[Tuple[Any, ...]]:
        """A basic index as Python values (ints, slices with constant bounds, None, ...);
        None for advanced indexing or bounds we cannot compute."""
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out: List[Any] = []
        for p in parts:
            if isinstance(p, ast.Slice):
                vals: List[Optional[int]] = []
                for b in (p.lower, p.upper, p.step):
                    c = None if b is None else _const_int(b)
                    if b is not None and c is None:
                        return None
                    vals.append(c)
                out.append(slice(*vals))
            elif isinstance(p, ast.Constant) and p.value is None:
                out.append(None)
            elif isinstance(p, ast.Constant) and p.value is Ellipsis:
                out.append(...)
            else:
                c = _const_int(p)
                if c is None and isinstance(p, (ast.Name, ast.Attribute)):
                    # `x[:, self.channel]`: a name or attribute holding a known int
                    v = self.eval(p, st)  # type: ignore[attr-defined]
                    if isinstance(v, ConstV) and isinstance(v.value, int) and not isinstance(v.value, bool):
                        c = v.value
                if c is None:
                    return None
                out.append(c)
        return tuple(out)

    def binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        if not isinstance(left, TensorV) and not isinstance(right, TensorV) and (
                isinstance(left, NumberV) or isinstance(right, NumberV)):
            if isinstance(left, (NumberV, ConstV)) and isinstance(right, (NumberV, ConstV)):
                cuts = [x.cut for x in (left, right) if isinstance(x, NumberV) and x.cut is not None]
                return NumberV(cuts[0] if cuts else None)
            return super().binop(left, op, right, st, node)  # type: ignore[misc]
        out = super().binop(left, op, right, st, node)  # type: ignore[misc]
        if not self.standalone and isinstance(out, TensorV) and out.tid not in self.shapes and (
                isinstance(left, TensorV) or isinstance(right, TensorV)):
            ls = self.shapes.get(left.tid) if isinstance(left, TensorV) else ()
            rs = self.shapes.get(right.tid) if isinstance(right, TensorV) else ()
            if not isinstance(left, (TensorV, ConstV, NumberV)) or not isinstance(right, (TensorV, ConstV, NumberV)):
                return out
            shape = fs.matmul(ls, rs) if isinstance(op, ast.MatMult) else fs.broadcast([ls, rs])
            if shape is not None:
                self.shapes[out.tid] = shape
        return out

    def check_stale_retained(self, st: State, order: Sequence[Any], span: Span) -> None:
        # `.to(device)` that may return the leaf itself: its copy node exists only if it copied,
        # and then the in-place update hits the copy, not the leaf the node was recorded from
        maybe_nodes = {id(st.t[tid].grad_fn) for tid in self.maybe_leaf if tid in st.t and st.t[tid].grad_fn}
        super().check_stale_retained(st, [m for m in order if id(m) not in maybe_nodes], span)  # type: ignore[misc]

    def ex_BinOp(self, node: ast.BinOp, st: State) -> Value:
        for operand in (node.left, node.right):
            if isinstance(operand, ast.Attribute) and operand.attr == "grad":
                operand._gw_arith = True  # type: ignore[attr-defined]  # `w.grad` used in arithmetic
        return super().ex_BinOp(node, st)  # type: ignore[misc]

    def ex_Compare(self, node: ast.Compare, st: State) -> Value:
        self._cmp_stack.append([])
        try:
            out = super().ex_Compare(node, st)  # type: ignore[misc]
        finally:
            operands = self._cmp_stack.pop()
        if isinstance(out, TensorV) and out.tid not in self.cuts:
            if any(st.t[t.tid].rg is not False for t in operands if t.tid in st.t):
                self.cuts[out.tid] = self._cut_here("nondiff", self.span_of(node), "a comparison")  # type: ignore[attr-defined]
            else:
                c = self._inputs_cut(st, operands)
                if c is not None:
                    self.cuts[out.tid] = c
            self.dtypes[out.tid] = "bool"
            shape = fs.broadcast([self.shapes.get(t.tid) for t in operands]) if operands else None
            if shape is not None:
                self.shapes[out.tid] = shape
        return out

    def compare(self, a: Value, op: ast.cmpop, b: Value, st: State) -> Optional[bool]:
        if self._cmp_stack:
            self._cmp_stack[-1].extend(x for x in (a, b) if isinstance(x, TensorV))
        return super().compare(a, op, b, st)  # type: ignore[misc]

    def load_attr(self, obj: Value, attr: str, st: State, node: ast.AST) -> Value:
        if obj.__class__ is NumberV:
            if attr == "backward" and obj.cut is not None:
                self.report_number_backward(st, obj, node)  # AttributeError on the attribute itself
            return UnknownV()
        return super().load_attr(obj, attr, st, node)  # type: ignore[misc]

    def element_of(self, it: Value, st: State) -> Value:
        if isinstance(it, NumberV):
            return NumberV(it.cut)  # an element of `t.tolist()` is a number holding t's values
        return super().element_of(it, st)  # type: ignore[misc]

    def call_builtin(self, name: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if name in ("sum", "min", "max") and len(args) == 1 and isinstance(args[0], SeqV):
            items = st.lists.get(args[0].lid, ())
            if items and all(isinstance(x, NumberV) for x in items):
                cuts = [x.cut for x in items if isinstance(x, NumberV) and x.cut is not None]
                return NumberV(cuts[0] if cuts else None)  # numbers in, a number out
        out = super().call_builtin(name, args, kwargs, st, node)  # type: ignore[misc]
        if isinstance(out, UnknownV) and not isinstance(out, NumberV):
            if name in ("float", "int", "bool", "round") and args and isinstance(args[0], TensorV):
                info = st.t.get(args[0].tid)
                rg = info.rg if info is not None else None
                return NumberV(self._cut_here("item", self.span_of(node), f"`{name}()`") if rg is not False  # type: ignore[attr-defined]
                               else self.cuts.get(args[0].tid))
            if name in ("float", "int", "round", "abs", "min", "max", "sum") and args and all(
                    isinstance(a, (NumberV, ConstV)) for a in args):
                cuts = [a.cut for a in args if isinstance(a, NumberV) and a.cut is not None]
                return NumberV(cuts[0] if cuts else None)
            if name == "len":
                return PLAIN_NUMBER
        return out

    # ------------------------------------------------------------------ grad mode regions
    def stmt_With(self, stmt: ast.With, st: State) -> List[State]:
        self.with_stack.append([self.span_of(stmt), False])  # type: ignore[attr-defined]
        try:
            return super().stmt_With(stmt, st)  # type: ignore[misc]
        finally:
            self.with_stack.pop()

    def grad_mode_of(self, ctx: Value, st: State) -> Optional[bool]:
        mode = super().grad_mode_of(ctx, st)  # type: ignore[misc]
        if self.with_stack:
            if mode is False:
                self.with_stack[-1][1] = True
        return mode

    # ------------------------------------------------------------------ modules and optimizers
    def construct_torch_module(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = super().construct_torch_module(qual, args, kwargs, st, node)  # type: ignore[misc]
        if isinstance(obj, ObjV):
            for slot, v in st.attrs(obj.oid).items():
                if isinstance(v, TensorV) and (slot.startswith("running_") or slot == "num_batches_tracked"):
                    self.cuts[v.tid] = DATA  # running statistics are buffers: never part of a graph
            self.mod_ctor[obj.oid] = (qual.rsplit(".", 1)[-1], [self._py(a, st) for a in args],
                                      {k: self._py(v, st) for k, v in kwargs.items()})
        return obj

    def call_object(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                    site: Optional[Span] = None) -> Value:
        seq0 = st.seq
        out = super().call_object(obj, args, kwargs, st, node, site)  # type: ignore[misc]
        attrs = st.attrs(obj.oid)
        if "__opaque__" in attrs or self._hides_module(obj, st):
            self._after_call(out, st, seq0, True, [])
            return out
        ctor = self.mod_ctor.get(obj.oid)
        if ctor is not None and isinstance(out, TensorV) and out.tid not in self.shapes and not self.standalone:
            try:
                shape = module_shape(ctor[0], ctor[1], ctor[2], [self._py(a, st) for a in args],
                                     {k: self._py(v, st) for k, v in kwargs.items()})
            except (TypeError, ValueError, IndexError):
                shape = None
            if shape is not None:
                self.shapes[out.tid] = shape
        return out

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
        out = super().module_method(obj, name, args, kwargs, st, node)  # type: ignore[misc]
        if name == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad", TRUE)
            span = self.span_of(node)  # type: ignore[attr-defined]
            for _, p in self.module_params(obj, st):  # type: ignore[attr-defined]
                self._after_requires_grad(st, p, flag, span)
        elif name == "zero_grad":
            self.note_zeroed(st)
        return out

    def construct_optimizer(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        obj = super().construct_optimizer(qual, args, kwargs, st, node)  # type: ignore[misc]
        if isinstance(obj, ObjV):
            self.opt_sites[obj.oid] = self.span_of(node)  # type: ignore[attr-defined]
            self.check_optimizer_params(st, obj, node)
        return obj

    def optimizer_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        if name == "step":
            self.check_step(st, obj, node)
        out = super().optimizer_method(obj, name, args, kwargs, st, node)  # type: ignore[misc]
        if name == "zero_grad":
            self.note_zeroed(st)
        return out

    def note_zeroed(self, st: State) -> None:
        for lid, _ in st.loop_ctx:
            self.zeroed_loops.add(lid)

    # ------------------------------------------------------------------ autograd.grad / backward
    def torch_autograd_call(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        span = self.span_of(node)  # type: ignore[attr-defined]
        outputs = args[0] if args else kwargs.get("outputs", kwargs.get("tensors"))
        roots = self.slot_tensors(st, outputs) if outputs is not None else []  # type: ignore[attr-defined]
        is_grad = qual.endswith(".grad")
        if is_grad:
            grads = kwargs.get("grad_outputs", args[2] if len(args) > 2 else None)
        else:
            grads = kwargs.get("grad_tensors", args[1] if len(args) > 1 else None)
        given = grads is not None and not (isinstance(grads, ConstV) and grads.value is None)
        if roots:
            self.check_backward(st, roots, span, given, "autograd.grad" if is_grad else "autograd.backward")
        if is_grad:
            inputs = kwargs.get("inputs", args[1] if len(args) > 1 else None)
            allow = kwargs.get("allow_unused", args[5] if len(args) > 5 else None)
            materialize = kwargs.get("materialize_grads")
            allow_b = self.truth_of(allow) if allow is not None else False  # type: ignore[attr-defined]
            if self.truth_of(materialize) is True if materialize is not None else False:  # type: ignore[attr-defined]
                allow_b = True
            if inputs is not None and roots:
                self.check_grad_inputs(st, roots, inputs, allow_b, span)
        out = super().torch_autograd_call(qual, args, kwargs, st, node)  # type: ignore[misc]
        if is_grad and isinstance(out, SeqV):
            create = kwargs.get("create_graph", args[4] if len(args) > 4 else None)
            for x in st.lists.get(out.lid, ()):
                if not isinstance(x, TensorV):
                    continue
                if self.truth_of(create) is True if create is not None else False:  # type: ignore[attr-defined]
                    self.fake_leaves.add(x.tid)
                else:
                    self.cuts[x.tid] = self._cut_here("detach", span, "`torch.autograd.grad` (without `create_graph=True`)")
        return out

    # ------------------------------------------------------------------ writes and loops (flowviews.py)
    def do_write(self, st: State, target: TensorV, opname: str, span: Span, **kw: Any) -> str:
        others = kw.pop("others", ())
        if kw.get("kind", "user") in ("user", "module"):
            self.check_write(st, target, opname, span, kw.get("site"), kw.get("name", ""), others)
        return super().do_write(st, target, opname, span, **kw)  # type: ignore[misc]

    def custom_function_view(self, st: State, out: TensorV, fn: str, span: Span) -> None:
        """``Fn.apply(x)`` whose forward returns ``x`` as-is, with no input requiring grad:
        autograd makes the output a view created without grad tracking, which a write of a
        value requiring grad cannot rebase."""
        self.nograd_views[out.tid] = (span, True, False, fn)

    def tensor_setitem(self, t: TensorV, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        self.check_setitem(st, t, target, value, stmt)
        super().tensor_setitem(t, target, value, st, stmt)  # type: ignore[misc]
        others = self.slot_tensors(st, value)  # type: ignore[attr-defined]
        self._after_inplace(st, t, others, self._hides_tensor(value, st), "__setitem__")

    def tensor_inplace_binop(self, cur: TensorV, op: ast.operator, rhs: Value, st: State, stmt: ast.AugAssign) -> None:
        super().tensor_inplace_binop(cur, op, rhs, st, stmt)  # type: ignore[misc]
        others = self.slot_tensors(st, rhs)  # type: ignore[attr-defined]
        self._after_inplace(st, cur, others, self._hides_tensor(rhs, st), "__iadd__")
        self._with_numbers(st, cur, [rhs])

    def stmt_For(self, stmt: ast.For, st: State) -> List[State]:
        done = self.freeze_loop(stmt, st)
        if done is not None:
            return done
        return super().stmt_For(stmt, st)  # type: ignore[misc]

    def check_function_class(self, info: Any) -> None:
        super().check_function_class(info)  # type: ignore[misc]
        self.check_backward_uses_grad(info)

    from gradwarden.engine.checks.flowchecks import (  # noqa: E402
        check_backward, report_number_backward, check_grad_inputs, check_requires_grad_change, check_grad_read,
        check_optimizer_params, check_step, check_checkpoint, check_backward_uses_grad, branch_conflict,
        report_no_grad, check_module_requires_grad, check_inference_saved,
    )
    from gradwarden.engine.checks.flowviews import (  # noqa: E402
        check_view_method, mark_unfold, check_write, check_setitem, freeze_loop, overlap_of,
    )


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


def _const_int(node: ast.expr) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    return None


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


def _nograd_decorator(fdef: Any) -> Optional[ast.AST]:
    for d in getattr(fdef, "decorator_list", ()):
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if name in _GRADMODE_OFF:
            return d
    return None
