"""What ``torch.*`` calls do to the abstract state: grad-mode context managers, functional ops
(looked up in the generated op table), ``torch.autograd.grad``/``backward`` and forward-mode AD,
``nn.Parameter`` and ``nn.init``, distributions; and the vocabulary the domain shares
(``arg_kind``, ``kw_keys``, the containers' names).

The op table (engine/domain/optable.py, generated from torch itself) answers "what does this op
save, alias, mutate"; the other modules of this room hold the semantics the table cannot
express: objects with state (modules, optimizers, ctx), backward calls, grad mode, and Python
containers.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.domain.schedules import DECAY_GAMMA_AT
from gradwarden.engine.domain import optable
from gradwarden.engine.state.model import (
    ConstV, NONE, NumberV, ObjV, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, UnknownV, Value, fresh_id,
)


GRAD_MODE_FALSE = ("torch.no_grad", "torch.autograd.no_grad", "torch.inference_mode",
                   "torch.autograd.grad_mode.no_grad", "torch.autograd.inference_mode")
GRAD_MODE_TRUE = ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad")
CONTAINERS = ("torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.ParameterList",
              "torch.nn.ParameterDict")
TENSOR_CTORS = {"torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor", "torch.IntTensor",
                "torch.BoolTensor", "torch.HalfTensor", "torch.ByteTensor", "torch.cuda.FloatTensor",
                "torch.cuda.LongTensor"}
# Tensor methods of Python's arithmetic operators (and their in-place and reflected forms),
# whose other operand may be a plain number (see ``operand_kind``).
ARITHMETIC = frozenset({f"{p}{n}{s}" for n in ("add", "sub", "mul", "div", "true_divide", "floor_divide", "pow",
                                                "remainder", "fmod", "rsub", "truediv", "floordiv", "mod")
                        for p, s in (("", ""), ("", "_"), ("__", "__"), ("__r", "__"), ("__i", "__"))})

# keyword arguments of ``torch.utils.checkpoint.checkpoint`` itself (the others go to the function)
_CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "preserve_rng_state", "determinism_check", "debug", "context_fn"})

REGRESSION_LOSSES = {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"}

# losses against a distribution another model predicts (distillation, mutual learning)
SOFT_TARGET_LOSSES = {"kl_div", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits"}


def kw_keys(kwargs: Dict[str, Value]) -> List[str]:
    """Keyword names for a table lookup; constant flags carry their value (``inplace=False``),
    so that variants measured with a different value are not merged in."""
    out = []
    for k, v in kwargs.items():
        if isinstance(v, ConstV) and isinstance(v.value, bool):
            out.append(f"{k}={v.value}")
        else:
            out.append(k)
    return out


def operand_kind(st: State, v: Value) -> str:
    """The kind of the other operand of an arithmetic op (``x / n``, ``x *= k``): a Python
    number derived from the code (``float(n)``, ``len(v)``, ``x.shape[0]``, an argument
    annotated ``int``) is a number, so the op saves no tensor for it and, with a number as
    divisor or factor, does not save ``x`` either (as for a literal)."""
    return "N" if isinstance(v, NumberV) else arg_kind(st, v)


def arg_kind(st: State, v: Value) -> str:
    if isinstance(v, TensorV):
        return "T"
    if isinstance(v, ConstV):
        if v.value is None:
            return "None"
        if isinstance(v.value, bool):
            return "B"
        if isinstance(v.value, (int, float)):
            return "N"
        if isinstance(v.value, tuple):
            return "S"
        return "O"
    if isinstance(v, SeqV):
        items = st.lists.get(v.lid, ())
        if items and all(isinstance(x, TensorV) for x in items):
            return "L"
        if items and all(isinstance(x, ConstV) for x in items):
            return "S"
        return "O"
    return "O"


# What a non-differentiable cast or comparison returns (a later cast to another dtype copies).
_RESULT_DTYPE = {**{n: "bool" for n in ("eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "bool",
                                       "greater", "less", "greater_equal", "less_equal", "not_equal",
                                       "logical_and", "logical_or", "logical_not", "logical_xor", "isclose")},
                 **{n: "int" for n in ("long", "int", "byte", "short", "char", "argmax", "argmin", "argsort",
                                      "nonzero")}}

# Ops whose Python-number operand autograd wraps in a tensor and saves (MulBackward0, DivBackward0).
WRAPS_NUMBER = frozenset({"mul", "multiply", "div", "divide", "true_divide", "__mul__", "__rmul__", "__truediv__"})



# reparametrizations that replace a module's parameter by new ones (the module is returned); measured
# under torch 2.13: weight_norm (both spellings) registers new parameters (original0/1, weight_g/_v),
# while spectral_norm and orthogonal keep the old Parameter object as `original` / `weight_orig`
REPARAMETRIZE = frozenset(("torch.nn.utils.weight_norm", "torch.nn.utils.parametrizations.weight_norm"))

class _SavesAll:
    """Semantics of a distribution's parameter transform and methods: keeps its inputs."""

    alias = None
    mutates = ()
    differentiable = True
    n_outputs = 1
    nondiff_outputs = ()
    factory = False
    slots = ()

    @staticmethod
    def saves(slot: Any, rg: Sequence[Optional[bool]]) -> Optional[bool]:
        return slot != "out" and isinstance(slot, int)


_SAVES_ALL = _SavesAll()


class _OtherOperands(_SavesAll):
    """A product of several operands (einsum): each is saved iff another requires grad."""

    def __init__(self, n: int) -> None:
        self.n = n

    def saves(self, slot: Any, rg: Sequence[Optional[bool]]) -> Optional[bool]:
        if not isinstance(slot, int):
            return False
        others = [r for i, r in enumerate(rg) if i != slot]
        if any(r is True for r in others):
            return True
        return False if all(r is False for r in others) else None


class TorchCalls:
    """The ``torch`` role: calls of ``torch.*`` functions and classes."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ================================================================== grad mode
    def grad_mode_obj(self, st: State, mode: Optional[bool]) -> Value:
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__gradmode__", ConstV(mode))
        return obj

    def grad_mode_of(self, ctx: Value, st: State) -> Optional[bool]:
        if isinstance(ctx, ObjV):
            m = st.attrs(ctx.oid).get("__gradmode__")
            if isinstance(m, ConstV) and isinstance(m.value, bool):
                return m.value
        if isinstance(ctx, RefV) and ctx.kind == "torch":
            if ctx.name in GRAD_MODE_FALSE:
                return False
            if ctx.name in GRAD_MODE_TRUE:
                return True
        return None

    # ================================================================== torch.* calls
    def call_torch(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        out = self._call_torch(qual, args, kwargs, st, node)
        if qual.rsplit(".", 1)[-1] in WRAPS_NUMBER and qual.count(".") == 1:
            self.note_wrapped_number(out, args, kwargs, st)
        return out

    def checkpointed(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Optional[Value]:
        """``checkpoint(fn, *args)`` computes ``fn(*args)``: the same values and, from the backward's
        side, the same graph through ``fn``'s parameters (a wrapper module in ``utils/`` around a
        block). Not so where a reentrant checkpoint (``use_reentrant`` not ``False``) gets no input
        that requires grad: its output has no graph (GW708), left to the caller (None)."""
        flag = kwargs.get("use_reentrant")
        non_reentrant = flag is not None and self.it.ev.truth_of(flag) is False
        if not non_reentrant:
            tensors = [x for a in args[1:] for x in self.it.graph.slot_tensors(st, a)]
            if not tensors or all(st.t.get(x.tid) is not None and st.t[x.tid].rg is False for x in tensors):
                return None
        kw = {k: v for k, v in kwargs.items() if k not in _CHECKPOINT_OPTIONS}
        start = st.seq
        out = self.it.ev.call(args[0], list(args[1:]), kw, st, node)
        if non_reentrant:
            # non-reentrant: the saved tensors of what ran here are recomputed in the backward, whose
            # version checks then pass; an in-place write of this forward on a tensor it saved is
            # made again on the recomputed tensor, so the backward computes with the written values
            # (measured: no error, gradients that differ from the same network without checkpoint)
            meta = st.own("meta")
            meta["recomputed"] = meta.get("recomputed", ()) + ((start, st.seq),)
        return out

    def note_wrapped_number(self, out: Value, args: Sequence[Value], kwargs: Dict[str, Value], st: State) -> None:
        """``w * 2``, ``w / 2``: autograd wraps the Python number in a tensor and saves it, so a
        backward frees that node like any other (measured: a second backward through ``w * 2``
        raises; through ``w + 2`` it does not)."""
        if not isinstance(out, TensorV) or out.tid not in st.t:
            return
        node = st.t[out.tid].grad_fn
        if node is None or node.saved:
            return
        if any(isinstance(a, ConstV) and isinstance(a.value, (int, float)) for a in list(args) + list(kwargs.values())):
            node.holds = True

    def _call_torch(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        span = self.it.span_of(node)
        if qual in GRAD_MODE_FALSE:
            return self.grad_mode_obj(st, False)
        if qual in GRAD_MODE_TRUE:
            return self.grad_mode_obj(st, True)
        if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
            mode = args[0] if args else kwargs.get("mode", UNKNOWN)
            b = mode.value if isinstance(mode, ConstV) and isinstance(mode.value, bool) else None
            if b is not None and getattr(node, "_gw_statement", False):
                st.grad_enabled = b  # called as a statement: sets the mode from here on
            elif getattr(node, "_gw_statement", False):
                st.grad_enabled = True  # a mode not known here (a saved `prev` restored): assume autograd is on
            return self.grad_mode_obj(st, b)
        if qual in ("torch.autograd.grad", "torch.autograd.backward"):
            return self.torch_autograd_call(qual, args, kwargs, st, node)
        if qual.startswith("torch.autograd.forward_ad."):
            return self.forward_ad_call(qual.rsplit(".", 1)[-1], args, st, node)
        if qual.rsplit(".", 1)[-1] == "GradScaler":
            obj = ObjV(fresh_id())
            st.set_attr(obj.oid, "__scaler__", TRUE)
            return obj
        if qual.startswith("torch.optim.swa_utils."):
            return self.it.optim.construct_swa(qual, args, kwargs, st, node)
        if qual in REPARAMETRIZE:
            return self.reparametrize(qual, args, kwargs, st, node)
        if qual == "torch.utils.checkpoint.checkpoint" and args and isinstance(args[0], (RefV, ObjV)):
            out = self.checkpointed(args, kwargs, st, node)
            if out is not None:
                return out
        if qual == "torch.optim.lr_scheduler.LambdaLR":
            return self.it.optim.schedules.construct(args, kwargs, st, node)
        if qual.startswith("torch.optim.lr_scheduler.") and qual.rsplit(".", 1)[-1] in DECAY_GAMMA_AT:
            return self.it.optim.schedules.construct_decay(qual, args, kwargs, st, node)
        if qual.startswith("torch.optim.") and not qual.startswith("torch.optim.lr_scheduler") \
                and qual.rsplit(".", 1)[-1][:1].isupper():
            return self.it.optim.construct_optimizer(qual, args, kwargs, st, node)
        if qual.startswith("torch.distributions."):
            return self.construct_distribution(qual, args, kwargs, st, node)
        if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return self.make_parameter(args, kwargs, st, node)
        if qual.startswith("torch.nn.init."):
            return self.nn_init(qual, args, st, node)
        if qual.rsplit(".", 1)[-1] in ("clip_grad_norm_", "clip_grad_value_", "clip_grad_norm") and qual.startswith("torch.nn.utils"):
            self.it.optim.check_clip(qual, args[0] if args else kwargs.get("parameters", UNKNOWN), st, node)
            self.it.optim.zeroed.at_clip(qual, args, kwargs, node)
        if qual.startswith("torch.nn.utils.") or qual.startswith("torch.cuda.") or qual.startswith("torch.backends."):
            return UNKNOWN
        if qual in ("torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"):
            # data_parallel(module, inputs, device_ids, ...) runs module(*inputs) on replicas of
            # it: the same ops and parameters, the same graph (DCGAN's multi-GPU branch)
            module = args[0] if args else kwargs.get("module")
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
            if isinstance(module, ObjV) and inputs is not None:
                items = self.it.ev.known_items(inputs, st) if isinstance(inputs, SeqV) and inputs.kind == "tuple" \
                    else None
                return self.it.modules.call_object(module, list(items) if items is not None else [inputs], {}, st,
                                                   node)
        if qual in CONTAINERS:
            return self.it.modules.construct_container(qual, args, kwargs, st, node)
        if qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper() and \
                not qual.startswith("torch.nn.functional."):
            return self.it.modules.construct_torch_module(qual, args, kwargs, st, node)
        if qual in TENSOR_CTORS:
            return self.it.graph.new_tensor(st, rg=False, node=node)
        short = qual.rsplit(".", 1)[-1]
        if short in _RESULT_DTYPE and qual.count(".") == 1:  # torch.gt(a, b), torch.isnan(x) ...
            out = self._call_torch_op(qual, args, kwargs, st, node, span)
            if isinstance(out, TensorV) and out.tid in st.t and st.t[out.tid].grad_fn is None:
                st.update_t(out.tid, dtype=_RESULT_DTYPE[short])
            return out
        if qual.startswith("torch.nn.functional.") and kwargs.get("inplace") is TRUE or \
                (isinstance(kwargs.get("inplace"), ConstV) and kwargs["inplace"].value is True):
            if args and isinstance(args[0], TensorV):
                if short.startswith("dropout") or short in ("alpha_dropout", "feature_alpha_dropout"):
                    training = kwargs.get("training", args[2] if len(args) > 2 else TRUE)
                    if self.it.ev.truth_of(training) is False:
                        return args[0]
                rest = {k: v for k, v in kwargs.items() if k != "inplace"}
                kinds = [arg_kind(st, a) for a in args]
                info = optable.lookup_function(qual, kinds, list(rest) + ["inplace=True"])
                if info is not None and 0 in info.mutates:
                    others = [a for a in args[1:] if isinstance(a, TensorV)]
                    return self.it.tensors.inplace_op(args[0], info, others, st, node, f"{short}(inplace=True)")
                return self.it.tensors.call_tensor_method(args[0], short + "_", args[1:], rest, st, node, fn_name=qual)
        if qual.startswith("torch.nn.functional.dropout") or short in ("dropout", "alpha_dropout"):
            training = kwargs.get("training", args[2] if len(args) > 2 else TRUE)
            p = kwargs.get("p", args[1] if len(args) > 1 else ConstV(0.5))
            if self.it.ev.truth_of(training) is False or (isinstance(p, ConstV) and p.value == 0):
                return args[0] if args else UNKNOWN
        if qual in {"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split", "torch.hsplit",
                    "torch.vsplit"}:
            if args and isinstance(args[0], TensorV):
                return self.it.tensors.call_tensor_method(args[0], short, args[1:], kwargs, st, node)
        if qual == "torch.einsum" and len(args) >= 2:
            operands = self.it.graph.slot_tensors(st, args[1]) if len(args) == 2 else \
                [a for a in args[1:] if isinstance(a, TensorV)]
            if len(operands) >= 2:
                # The table measures einsum's operands as one varargs slot, which cannot say
                # "each operand is saved iff another one requires grad" (as measured for mm/bmm).
                return self.it.graph.apply_op(st, _OtherOperands(len(operands)), operands, span, "einsum")[0]
        return self._call_torch_op(qual, args, kwargs, st, node, span)

    def _call_torch_op(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                       span: Span) -> Value:
        short = qual.rsplit(".", 1)[-1]
        kinds = [arg_kind(st, a) for a in args]
        info = optable.lookup_function(qual, kinds, kw_keys(kwargs))
        if info is None and qual.startswith("torch.nn.functional."):
            info = optable.lookup_function("torch." + short, kinds, kw_keys(kwargs))
        return self.run_function_op(info, qual, args, kwargs, st, node, span)

    def run_function_op(self, info: Any, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                        node: ast.AST, span: Span) -> Value:
        tensor_args = [a for a in args if isinstance(a, TensorV) or arg_kind(st, a) == "L"]
        tensor_args += [v for k, v in kwargs.items() if isinstance(v, TensorV) and k != "out"]
        out_kw = kwargs.get("out")
        if info is not None and info.factory:
            rg = kwargs.get("requires_grad")
            t = self.it.graph.new_tensor(st, rg=bool(rg.value) if isinstance(rg, ConstV) else (None if rg else False),
                                         node=node)
            return t
        if info is None:
            if not tensor_args:
                rg = kwargs.get("requires_grad")
                if isinstance(rg, ConstV) and rg.value is True:
                    return self.it.graph.new_tensor(st, rg=True, node=node)
                return UNKNOWN
            # An op we know nothing about: connect the graph, save nothing, alias nothing.
            outs = self.it.graph.apply_op(st, None, tensor_args, span, qual.rsplit(".", 1)[-1])
            return outs[0]
        if info.mutates:
            target_idx = info.mutates[0]
            if target_idx < len(tensor_args) and isinstance(tensor_args[target_idx], TensorV):
                target = tensor_args[target_idx]
                others = [a for i, a in enumerate(tensor_args) if i != target_idx]
                return self.it.tensors.inplace_op(target, info, others, st, node, qual.rsplit(".", 1)[-1] + "()")
        if qual.rsplit(".", 1)[-1] in REGRESSION_LOSSES and len(tensor_args) >= 2:
            self.it.tensors.check_target_detached(tensor_args[0], tensor_args[1], st, span)
        outs = self.it.graph.apply_op(st, info, tensor_args, span, qual.rsplit(".", 1)[-1])
        if qual.rsplit(".", 1)[-1] == "linear" and len(tensor_args) >= 2 and outs:
            self.it.writes.saves_a_view_of(outs[0], tensor_args[1], st)
        if qual.rsplit(".", 1)[-1] in SOFT_TARGET_LOSSES and len(tensor_args) >= 2 and outs and \
                st.t[outs[0].tid].grad_fn is not None:
            self.it.tensors.check_peer_target(tensor_args[0], tensor_args[1], st, span, st.t[outs[0].tid].grad_fn)
        if isinstance(out_kw, TensorV):
            self.it.tensors.inplace_op(out_kw, None, [outs[0]], st, node, f"{qual.rsplit('.', 1)[-1]}(out=...)")
            return out_kw
        if len(outs) == 1:
            return outs[0]
        return self.it.ev.new_seq(list(outs), st, kind="tuple")

    def torch_autograd_call(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        span = self.it.span_of(node)
        outputs = args[0] if args else kwargs.get("outputs", kwargs.get("tensors", UNKNOWN))
        retain = kwargs.get("retain_graph")
        create = kwargs.get("create_graph")
        create_b = isinstance(create, ConstV) and create.value is True
        if retain is None:
            retain_b = create_b
        else:
            retain_b = self.it.ev.truth_of(retain) is not False
        if qual.endswith(".grad"):
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            ran = self.it.backward.do_backward(st, [outputs], span, retain=retain_b, accumulate=False,
                                               inputs=[inputs] if not isinstance(inputs, UnknownV) else ())
            n = len(self.it.graph.slot_tensors(st, inputs)) or 1
            gnode = self.it.backward.gradient_graph(st, ran, span) if create_b and st.grad_enabled else None
            grads = []
            for _ in range(n):
                g = self.it.graph.new_tensor(st, rg=True if create_b else False, node=node, grad_fn=gnode)
                grads.append(g)
            return self.it.ev.new_seq(grads, st, kind="tuple")
        inputs = kwargs.get("inputs")
        self.it.backward.do_backward(st, [outputs], span, retain=retain_b,
                                     user_grad="grad_tensors" in kwargs or len(args) > 1,
                                     inputs=[inputs] if isinstance(inputs, (TensorV, SeqV)) else ())
        return NONE

    def forward_ad_call(self, name: str, args: List[Value], st: State, node: ast.AST) -> Value:
        """torch.autograd.forward_ad: ``make_dual`` gives a view carrying a tangent (later ops
        propagate it), ``unpack_dual`` splits it into primal and tangent, ``dual_level()`` is a
        context manager."""
        x = args[0] if args else UNKNOWN
        if name == "make_dual" and isinstance(x, TensorV):
            info = st.t[x.tid]
            out = self.it.graph.alias_tensor(st, x, kind="view", span=self.it.span_of(node), rg=info.rg,
                                             grad_fn=self.it.graph.make_node(st, "make_dual", self.it.span_of(node), [x],
                                                                             (), st.next_seq())
                                             if info.rg is not False and st.grad_enabled else None)
            st.update_t(out.tid, dual=True)
            return out
        if name == "unpack_dual" and isinstance(x, TensorV):
            primal = self.it.graph.apply_op(st, None, [x], self.it.span_of(node), "unpack_dual")[0]
            tangent = self.it.graph.apply_op(st, None, [x], self.it.span_of(node), "tangent")[0]
            for t in (primal, tangent):
                st.update_t(t.tid, dual=False)
            return self.it.ev.new_seq([primal, tangent], st, kind="tuple")
        if name == "dual_level":
            return ObjV(fresh_id())
        return UNKNOWN

    # ================================================================== nn.Parameter / init
    def reparametrize(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                      node: ast.AST) -> Value:
        """``weight_norm(m)`` (``torch.nn.utils`` or ``.parametrizations``): torch removes the module's
        parameter ``name`` (default ``weight``) and computes it, at every forward, from new parameters
        (``parametrizations.weight.original0/1``, or ``weight_g``/``weight_v``); the module itself is
        returned. The old parameter object is no longer used by the forward: an optimizer built
        before the call holds it, and it never gets a gradient. Modelled as a new parameter in the
        module's slot (the values it is computed from, made here)."""
        mod = args[0] if args else kwargs.get("module", UNKNOWN)
        if not isinstance(mod, ObjV) or not self.it.modules.is_module_obj(mod, st):
            return mod if args else UNKNOWN
        name = args[1] if len(args) > 1 else kwargs.get("name", ConstV("weight"))
        if not (isinstance(name, ConstV) and isinstance(name.value, str)):
            return mod
        self.it.modules.replace_parameter(mod, name.value, st, node)
        return mod

    def make_parameter(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        data = args[0] if args else kwargs.get("data", UNKNOWN)
        rgv = kwargs.get("requires_grad", args[1] if len(args) > 1 else TRUE)
        rg = self.it.ev.truth_of(rgv)
        p = self.it.graph.new_tensor(st, rg=True if rg is None else rg, node=node, param=True)
        if isinstance(data, TensorV):
            di = st.t[data.tid]
            st.update_t(p.tid, storage=di.storage, expanded=di.expanded)
        return p

    def nn_init(self, qual: str, args: List[Value], st: State, node: ast.AST) -> Value:
        # nn.init.* run under no_grad inside torch: never a leaf error, but a version bump.
        if args and isinstance(args[0], TensorV) and qual.endswith("_"):
            saved = st.grad_enabled
            st.grad_enabled = False
            try:
                self.it.writes.do_write(st, args[0], qual.rsplit(".", 1)[-1] + "()", self.it.span_of(node),
                                        name=self.it.text_of(node.args[0]) if isinstance(node, ast.Call) and node.args else "")
            finally:
                st.grad_enabled = saved
            return args[0]
        return UNKNOWN

    # ================================================================== distributions
    def construct_distribution(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__dist__", ConstV(qual))
        span = self.it.span_of(node)
        derived: List[Value] = []
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, TensorV):
                # Distributions turn their parameters into cached tensors (logits <-> probs,
                # scale_tril ...) when built or first used: that node saves the parameter.
                d = self.it.graph.apply_op(st, _SAVES_ALL, [v], span, qual.rsplit(".", 1)[-1])[0]
                derived.append(d)
        st.set_attr(obj.oid, "__params__", self.it.ev.new_seq(derived, st))
        return obj

    def distribution_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        params = st.attrs(obj.oid).get("__params__")
        ps = list(st.lists.get(params.lid, ())) if isinstance(params, SeqV) else []
        span = self.it.span_of(node)
        if name in ("sample", "sample_n", "enumerate_support"):
            return self.it.graph.new_tensor(st, rg=False, node=node)
        slots = ps + [a for a in args if isinstance(a, TensorV)]
        if not slots:
            return UNKNOWN
        return self.it.graph.apply_op(st, _SAVES_ALL, slots, span, name)[0]
