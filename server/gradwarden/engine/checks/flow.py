"""Gradient flow over the abstract state: which tensors certainly do not require grad (and
where their gradient path was cut), which are certainly not scalars, which are leaves,
views made under ``no_grad`` — the facts the checks of gradient flow read.

``FlowFacts`` holds those facts in side tables keyed by tensor id; the layers of
engine/checks/flowtorch.py and engine/checks/flowlayers.py record them: each specialises a role
of the domain or of the interpreter (``FlowTensors(Tensors)`` ...), calls it, and *observes*
what it produced. They never change what an op does, with two exceptions that correct the model
where torch's behaviour is measured: ``torch.as_tensor(t)`` returns ``t`` itself, and an
``unfold`` view is not an expanded tensor (writes into it do not raise; overlapping windows
silently share elements).

The facts are conservative: a tensor has a ``Cut`` only when every value it was computed
from is accounted for; an argument the analysis cannot see into makes the cut unsure
(information) or unknown (silent). Stay silent when in doubt — see docs/rules.md, GW7xx.
"""
from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from gradwarden.engine.checks.recurrent import check_detached_states
from gradwarden.engine.checks.flowfacts import Cut, join_cuts, unsure
from gradwarden.engine.checks.branches import ExactZeros
from gradwarden.engine.checks.hookslots import HookSlots
from gradwarden.engine.checks.modes import ModeFacts
from gradwarden.engine.checks.reach import GradientReach
from gradwarden.engine.checks.samples import NonReparameterizedSamples
from gradwarden.engine.diagnostic import Span
from gradwarden.engine.domain import optable
from gradwarden.engine.domain.flowops import T, UNK, pair_shape, parts_shapes
from gradwarden.engine.events import Event
from gradwarden.engine.front.callsites import GRAD_OFF_CONTEXTS
from gradwarden.engine.state.model import ConstV, DictV, NumberV, ObjV, RefV, SeqV, State, TensorV, Value


SHAPE_CHANGING_INPLACE = frozenset({"resize_", "resize_as_", "squeeze_", "unsqueeze_", "t_", "transpose_",
                                    "as_strided_", "set_", "swapaxes_", "swapdims_"})


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


def _const_int(node: ast.expr) -> Optional[int]:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, int) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    return None


def _nograd_decorator(fdef: Any) -> Optional[ast.AST]:
    for d in getattr(fdef, "decorator_list", ()):
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) else ""
        if name in GRAD_OFF_CONTEXTS:
            return d
    return None


class FlowFacts:
    """The ``flow`` role: the gradient-flow facts, their helpers, and the reports decided at the end."""

    def __init__(self, it: Any) -> None:
        self.it = it
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
        # expand outputs: tid -> per leading dim 0 kept / 1 maybe broadcast / 2 broadcast, and
        # whether a dim past those may be broadcast (engine/checks/flowviews.py, note_expand)
        self.broadcast_dims: Dict[int, Tuple[Tuple[int, ...], bool]] = {}
        self.slices: Dict[int, Tuple[int, Tuple[Any, ...]]] = {}  # view -> (parent tid, its basic index)
        self.layouts: Dict[int, int] = {}  # re-laid-out view -> parent tid
        self.noncontig: Set[int] = set()
        self.grad_owner: Dict[int, int] = {}  # `.grad` tensor -> the tensor it belongs to
        self.zeroed_loops: Set[int] = set()  # loop ids inside which gradients were zeroed
        self.zero_sites: Dict[int, Tuple[Span, str]] = {}  # loop id -> its latest zero_grad() call and its text
        self.manual_grads: Set[int] = set()  # `.grad = ...` assigned
        self.mod_ctor: Dict[int, Tuple[str, List[Any], Dict[str, Any]]] = {}
        self.opt_sites: Dict[int, Span] = {}
        self.opt_built_id: Dict[int, int] = {}  # optimizer oid -> the next id when it was built
        # the call sites that led to an optimizer's construction, and to a parameter made by a torch
        # module's constructor inside a call: a module made after the optimizer is reported at the
        # call, in the frame that built the optimizer, that made it (`model.reset_classifier(n)`)
        self.opt_chains: Dict[int, Tuple[Tuple[Span, ...], Any]] = {}  # (call sites, loop context)
        self.param_chains: Dict[int, Tuple[Span, ...]] = {}
        self.opt_models: Dict[int, ObjV] = {}  # optimizer built in another module -> the model given whole
        self.with_stack: List[List[Any]] = []  # [span, disables grad]
        self.global_nograd: Optional[Span] = None  # torch.set_grad_enabled(False) as a statement
        self._cmp_stack: List[List[TensorV]] = []
        self._if_index: Optional[List[Tuple[str, Tuple[int, int], Tuple[int, int], int]]] = None
        # (loop id, event) decided at the end; loop id None: already decided (GW725, one per zeroing call)
        self.pending_accum: List[Tuple[Optional[int], Event]] = []
        self.partly_zeroed: Set[Span] = set()  # zeroing calls GW725 was said of
        self.unknown_derived: Set[int] = set()  # tensors computed from an argument of unknown origin
        self.dtypes: Dict[int, str] = {}  # tid -> "bool" | "int" | "float", where the code says
        self.inference: Dict[int, Span] = {}  # tid -> the inference_mode region that made it
        self.inference_reported = False
        # tensor creation is a hot path: look for inference regions only in files that have one
        self.mentions_inference = "inference_mode" in it.src.text
        self.own_requires_grad: Optional[bool] = None  # flowchecks._defines_requires_grad, once per file
        self.plain_reported: Set[int] = set()  # optimizers already reported by GW716
        self.attr_unfreeze: Dict[int, Span] = {}  # param tid -> `module.requires_grad = True` that missed it
        self.frozen_tids: Dict[Any, Set[int]] = {}  # a freeze (Cut) -> the tensors it froze
        self.reach = GradientReach(self)  # which parameters the losses reach (engine/checks/reach.py)
        self.hooks = HookSlots(it)  # what forward hooks keep (engine/checks/hookslots.py)
        self.zeros = ExactZeros(it)  # -inf masks, the exact zeros softmax makes of them (engine/checks/branches.py)
        self.modes = ModeFacts(it)  # eval-mode branches taken by training steps (engine/checks/modes.py)
        self.samples = NonReparameterizedSamples(self)  # `.sample()` where `.rsample()` was needed (engine/checks/samples.py)

    def finish(self) -> None:
        """At the end of the run: the reports decided then (gradients accumulated over the
        iterations of a loop that never zeroes them)."""
        for lid, ev in self.pending_accum:
            if lid is None or lid not in self.zeroed_loops:
                self.it.emit(ev)
        self.pending_accum = []
        self.reach.finish()
        check_detached_states(self)  # GW733 (engine/checks/recurrent.py): reads what reach saw used
        self.samples.finish()
        self.modes.finish()  # after reach: GW724 yields to a GW718/GW719 at the same switch

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

    def _hiding(self, v: Value, st: State) -> Any:
        """``_opaque`` for one operand written in place (``x[i] = v``, ``x += v``)."""
        if not self._hides_tensor(v, st):
            return False
        return True if isinstance(v, (ObjV, RefV)) else "value"

    def _opaque(self, kind: str, name: str, args: Sequence[Value], kwargs: Dict[str, Value], st: State) -> Any:
        """Does an argument hide a tensor the analysis does not follow? False; "value" when it
        is an operand of unknown value (``pred * target`` with ``pred`` from a call the
        analysis cannot see: it may carry the graph itself); True for anything else (an
        object or a function passed in)."""
        if not args and not kwargs:
            return False
        caps = _capable(kind, name)
        found: Any = False
        for i, a in enumerate(args):
            if self._hides_tensor(a, st) and (caps is None or i in caps[0] or caps[2]
                                              or isinstance(a, (ObjV, RefV))):
                if not isinstance(a, (ObjV, RefV)):
                    return "value"
                found = True
        for k, a in kwargs.items():
            if k == "out":
                continue
            if self._hides_tensor(a, st) and (caps is None or k in caps[1] or isinstance(a, (ObjV, RefV))):
                if not isinstance(a, (ObjV, RefV)):
                    return "value"
                found = True
        return found

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
        for fdef in reversed(self.it.call_stack):
            site = _nograd_decorator(fdef)
            if site is not None:
                return self.it.span_of(site)
        return self.global_nograd

    def _nograd_cut(self, st: State, tensors: Sequence[TensorV], span: Optional[Span], what: str = "") -> Cut:
        inherited = self._inputs_cut(st, tensors)
        if inherited is not None and inherited.kind == "data" and inherited.sure and all(
                st.t[t.tid].rg is False for t in tensors if t.tid in st.t):
            return inherited
        region = self._region(st)
        if inherited is not None and inherited.kind == "nograd" and inherited.at_region and inherited.region == region \
                and all(st.t[t.tid].rg is False for t in tensors if t.tid in st.t):
            # inside a `@torch.no_grad()` helper that cut its argument, an op on what it cut (`(2 * inter + eps)
            # / ...`) cuts nothing new: the helper's result is that cut (GW722 names the decorator)
            return inherited
        return Cut("nograd", span, what or "`torch.no_grad()`", sure=region is not None,
                   stack=tuple(self.it.call_spans), region=region,
                   at_region=region is not None and (
                       inherited is not None and inherited.at_region and inherited.region == region
                       or self._cuts_argument(st, tensors)))

    def _cuts_argument(self, st: State, tensors: Sequence[TensorV]) -> bool:
        """The innermost region off is a ``@torch.no_grad()`` helper's decorator and one of
        ``tensors`` is an argument it was handed that requires grad: the helper transforms a value
        of the graph (``decode(pred)``) and its decorator cuts it, rather than a helper reading
        statistics of a model (``stats(policy, obs)``) whose use in a loss is the slip."""
        offs = [span for span, off in self.with_stack if off]
        if offs:
            return self._block_cuts_argument(st, tensors, offs[-1])
        stack, args = self.it.call_stack, self.it.call_args
        for i in range(len(stack) - 1, -1, -1):
            if _nograd_decorator(stack[i]) is not None:
                passed = args[i] if i < len(args) else frozenset()
                if any(t.tid in passed and st.t[t.tid].rg is True for t in tensors if t.tid in st.t):
                    return True
                # a module's own method (`def encode(self, x)`) computing from the module's parameters:
                # a forward path the decorator turns off for every caller, not a statistics helper
                fargs = getattr(getattr(stack[i], "args", None), "args", ())
                return bool(fargs) and fargs[0].arg == "self" and any(
                    st.t[t.tid].param and st.t[t.tid].rg is True for t in tensors if t.tid in st.t)
        return False

    def _block_cuts_argument(self, st: State, tensors: Sequence[TensorV], block: Span) -> bool:
        """The grad-off ``with`` block now in force is written inside the function now running (a
        helper, a plain class's ``__call__``), and one of ``tensors`` is a tensor that function was
        handed that requires grad: the block cuts every caller's value (``with torch.no_grad(): return
        self.layer(h)``), so the block, not one caller's use, is where the fix goes."""
        stack, args = self.it.call_stack, self.it.call_args
        if not stack or len(args) < len(stack):
            return False
        fspan = self.it.span_of(stack[-1])
        if fspan is None or fspan.file != block.file or not fspan.contains(block.row, block.column):
            return False
        passed = args[len(stack) - 1]
        return any(t.tid in passed and st.t[t.tid].rg is True for t in tensors if t.tid in st.t)

    def _cut_here(self, kind: str, span: Optional[Span], what: str, sure: bool = True, origin: Optional[Cut] = None) -> Cut:
        return Cut(kind, span, what, sure=sure, stack=tuple(self.it.call_spans), origin=origin,
                   in_hook=bool(getattr(self.it, "hook_depth", 0)))

    def _frame_span(self, stack: Tuple[Span, ...], span: Optional[Span]) -> Optional[Span]:
        """Where, in the frame now running, something recorded at ``span`` (reached through
        the calls ``stack``) happened: the call in this frame that led to it."""
        depth = len(self.it.call_spans)
        if len(stack) > depth and tuple(stack[:depth]) == tuple(self.it.call_spans):
            return stack[depth]
        return span

    def _node_frame_span(self, info: Any) -> Optional[Span]:
        n = info.grad_fn
        if n is None:
            return info.created
        return self._frame_span(n.stack, n.call_span or n.span)

    def _inference_region(self, st: State) -> Optional[Span]:
        """The `torch.inference_mode()` block or decorator now in force, if that is what
        turned gradients off (tensors made there are inference tensors)."""
        region = self._region(st)
        if region is None or self.it.foreign_stack:
            return None
        return region if "inference_mode" in self.it.src.line(region.row) else None

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
                if opaque == "value":
                    # an operand of unknown value may carry a graph itself (in code that runs,
                    # it does: a model's prediction, `next(m.parameters())`): nothing is known
                    # about the result's gradient path, and nothing is said about it
                    del self.cuts[out.tid]
                else:
                    self.cuts[out.tid] = unsure(self.cuts[out.tid])  # type: ignore[assignment]
            if oi.grad_fn is not None and oi.grad_fn.seq > seq0:
                self.open_nodes.add(oi.grad_fn.id)

    def _pair_shapes(self, st: State, out: SeqV, name: str, shape: Any, args: Sequence[Value],
                     kwargs: Dict[str, Value]) -> None:
        """The shapes of the ``(values, indices)`` a ``max(dim)``/``sort``/``topk`` returns."""
        if self.it.standalone:
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

    def _part_shapes(self, st: State, out: SeqV, name: str, shape: Any, args: Sequence[Value],
                     kwargs: Dict[str, Value]) -> None:
        """The shapes of the pieces ``chunk``/``split``/``unbind`` return (``mu, logvar = h.chunk(2, -1)``)."""
        if self.it.standalone:
            return
        items = st.lists.get(out.lid, ())
        one = len(items) == 1  # one view stands for every piece (a homogeneous sequence)
        try:
            got = parts_shapes(name, shape, [self._py(a, st) for a in args],
                               {k: self._py(v, st) for k, v in kwargs.items()}, None if one else len(items))
        except (TypeError, ValueError, IndexError):
            got = None
        if one and got:
            got = got[:1] if all(s == got[0] for s in got) else None  # pieces of unequal sizes: no one shape
        for x, s in zip(items, got or ()):
            if isinstance(x, TensorV) and x.tid not in self.shapes and s is not None:
                self.shapes[x.tid] = s

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

    def _after_inplace(self, st: State, t: TensorV, others: Sequence[TensorV], opaque: bool, name: str) -> None:
        info = st.t.get(t.tid)
        if info is None:
            return
        if name in SHAPE_CHANGING_INPLACE:
            self.shapes.pop(t.tid, None)
        if info.rg is False and t.tid in self.cuts:
            c = join_cuts([self.cuts[t.tid]] + [self._tensor_cut(st, o) for o in others])
            if c is None or opaque == "value":
                self.cuts.pop(t.tid, None)  # (an operand of unknown value: see _after_call)
            else:
                self.cuts[t.tid] = unsure(c) if opaque else c  # type: ignore[assignment]
        if info.grad_fn is not None and opaque:
            self.open_nodes.add(info.grad_fn.id)
        owner = self.grad_owner.get(t.tid)
        if owner is not None:
            self.note_zeroed(st)

    def _after_requires_grad(self, st: State, t: TensorV, flag: Value, span: Span,
                             flag_node: Optional[ast.AST] = None) -> None:
        info = st.t.get(t.tid)
        if info is None or info.grad_fn is not None:
            return
        b = self.it.ev.truth_of(flag)
        if b is False:
            cut = self._cut_here("frozen", span, "`requires_grad = False`")
            if isinstance(flag_node, ast.Name) and self.it.call_spans:
                # `p.requires_grad = requires_grad` in a helper: the caller chose to freeze (its call is the fix)
                cut = replace(cut, flag_arg=True)
            self.cuts[t.tid] = cut
            self.frozen_tids.setdefault(cut, set()).add(t.tid)
        elif b is True:
            old = self.cuts.pop(t.tid, None)
            if old is not None and old.kind not in ("data", "frozen"):
                self.rewrapped[t.tid] = old
                self.reach.note_leaf(t.tid, old)  # a cut value made a new leaf (`w.detach().requires_grad_()`)
        else:
            self.cuts.pop(t.tid, None)

    def note_zeroed(self, st: State, span: Optional[Span] = None, what: str = "") -> None:
        for lid, _ in st.loop_ctx:
            self.zeroed_loops.add(lid)
            if span is not None:
                self.zero_sites[lid] = (span, what)  # the latest zeroing call of the loop

    def _int_bound(self, b: ast.expr, st: State) -> Optional[int]:
        """A slice bound: an int literal, or a name or attribute holding a known int (``x[:, K:]``,
        ``x[:, :-self.k]``)."""
        c = _const_int(b)
        if c is not None:
            return c
        sign = 1
        if isinstance(b, ast.UnaryOp) and isinstance(b.op, ast.USub):
            sign, b = -1, b.operand
        if isinstance(b, (ast.Name, ast.Attribute)):
            v = self.it.ev.eval(b, st)
            if isinstance(v, ConstV) and isinstance(v.value, int) and not isinstance(v.value, bool):
                return sign * v.value
        return None

    def basic_index(self, sl: ast.expr, st: State) -> Optional[Tuple[Any, ...]]:
        """A basic index as Python values (ints, slices with constant bounds, None, ...);
        None for advanced indexing or bounds we cannot compute."""
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out: List[Any] = []
        for p in parts:
            if isinstance(p, ast.Slice):
                vals: List[Optional[int]] = []
                for b in (p.lower, p.upper, p.step):
                    c = None if b is None else self._int_bound(b, st)
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
                    v = self.it.ev.eval(p, st)
                    if isinstance(v, ConstV) and isinstance(v.value, int) and not isinstance(v.value, bool):
                        c = v.value
                if c is None:
                    return None
                out.append(c)
        return tuple(out)
