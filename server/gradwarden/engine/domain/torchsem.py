"""What torch calls do to the abstract state: tensor ops (from the generated op table), tensor
methods and attributes, indexing, nn modules and containers, optimizers, distributions,
custom autograd Functions, grad-mode context managers, and the Python builtins we follow.

The op table (engine/domain/optable.py, generated from torch itself) answers "what does this op
save, alias, mutate"; this module holds the semantics the table cannot express: objects with
state (modules, optimizers, ctx), backward calls, grad mode, and Python containers.
"""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

from gradwarden.engine.domain import optable
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.halt import Halt
from gradwarden.engine.state.model import (
    FALSE, NONE, TRUE, UNKNOWN, ConstV, DictV, ObjV, RefV, SeqV, State, TensorV, UnknownV, Value, Write, fresh_id,
    make_tinfo, ref_value, tensor_value, walk_nodes,
)

GRAD_MODE_FALSE = ("torch.no_grad", "torch.autograd.no_grad", "torch.inference_mode",
                   "torch.autograd.grad_mode.no_grad", "torch.autograd.inference_mode")
GRAD_MODE_TRUE = ("torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad")
CONTAINERS = ("torch.nn.Sequential", "torch.nn.ModuleList", "torch.nn.ModuleDict", "torch.nn.ParameterList",
              "torch.nn.ParameterDict")
TENSOR_CTORS = {"torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor", "torch.IntTensor",
                "torch.BoolTensor", "torch.HalfTensor", "torch.ByteTensor", "torch.cuda.FloatTensor",
                "torch.cuda.LongTensor"}
NUMBER_METHODS = {"item", "tolist", "numpy", "size", "dim", "ndimension", "numel", "nelement", "stride",
                  "data_ptr", "is_contiguous", "element_size", "__len__", "get_device", "storage_offset",
                  "is_floating_point", "is_complex", "untyped_storage", "storage", "equal", "any_", "__repr__",
                  "__format__", "__bool__", "__float__", "__int__", "is_set_to", "has_names", "type"}
NOT_TENSOR_METHODS = {"items", "keys", "values", "get", "append", "extend", "update", "setdefault", "insert",
                      "popitem", "index", "count", "startswith", "endswith", "split_", "format", "strip"}
LAYOUT_VIEWS = {"transpose", "permute", "t", "T", "mT", "mH", "H", "swapaxes", "swapdims", "movedim", "flip",
                "transpose_", "adjoint"}
BINOP_METHOD = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.MatMult: "matmul",
                ast.Pow: "pow", ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.BitAnd: "bitwise_and",
                ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "bitwise_left_shift",
                ast.RShift: "bitwise_right_shift"}
INPLACE_METHOD = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_", ast.Pow: "pow_",
                  ast.FloorDiv: "floor_divide_", ast.Mod: "remainder_", ast.BitAnd: "bitwise_and_",
                  ast.BitOr: "bitwise_or_", ast.BitXor: "bitwise_xor_", ast.LShift: "bitwise_left_shift_",
                  ast.RShift: "bitwise_right_shift_"}
MAX_ZIP_KNOWN = 16  # zip of a known sequence with unknown ones: positions followed one by one
REGRESSION_LOSSES = {"mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"}
REGRESSION_LOSS_MODULES = {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"}
# losses against a distribution another model predicts (distillation, mutual learning)
SOFT_TARGET_LOSSES = {"kl_div", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits"}
SOFT_TARGET_LOSS_MODULES = {"KLDivLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"}
PARAM_SLOT = re.compile(r"^(weight|bias|in_proj_weight|in_proj_bias|q_proj_weight|k_proj_weight|v_proj_weight|"
                        r"bias_k|bias_v|out_proj\.weight|out_proj\.bias|weight_ih.*|weight_hh.*|bias_ih.*|"
                        r"bias_hh.*|weight_hr.*|running_mean|running_var|num_batches_tracked)$")


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

class TorchMixin:
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
        span = self.span_of(node)
        if qual in GRAD_MODE_FALSE:
            return self.grad_mode_obj(st, False)
        if qual in GRAD_MODE_TRUE:
            return self.grad_mode_obj(st, True)
        if qual in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled"):
            mode = args[0] if args else kwargs.get("mode", UNKNOWN)
            b = mode.value if isinstance(mode, ConstV) and isinstance(mode.value, bool) else None
            if b is not None and getattr(node, "_gw_statement", False):
                st.grad_enabled = b  # called as a statement: sets the mode from here on
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
            return self.construct_swa(qual, args, kwargs, st, node)
        if qual.startswith("torch.optim.") and not qual.startswith("torch.optim.lr_scheduler") \
                and qual.rsplit(".", 1)[-1][:1].isupper():
            return self.construct_optimizer(qual, args, kwargs, st, node)
        if qual.startswith("torch.distributions."):
            return self.construct_distribution(qual, args, kwargs, st, node)
        if qual in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return self.make_parameter(args, kwargs, st, node)
        if qual.startswith("torch.nn.init."):
            return self.nn_init(qual, args, st, node)
        if qual.startswith("torch.nn.utils.") or qual.startswith("torch.cuda.") or qual.startswith("torch.backends."):
            return UNKNOWN
        if qual in CONTAINERS:
            return self.construct_container(qual, args, kwargs, st, node)
        if qual.startswith("torch.nn.") and qual.rsplit(".", 1)[-1][:1].isupper() and \
                not qual.startswith("torch.nn.functional."):
            return self.construct_torch_module(qual, args, kwargs, st, node)
        if qual in TENSOR_CTORS:
            return self.new_tensor(st, rg=False, node=node)
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
                    if self.truth_of(training) is False:
                        return args[0]
                rest = {k: v for k, v in kwargs.items() if k != "inplace"}
                kinds = [arg_kind(st, a) for a in args]
                info = optable.lookup_function(qual, kinds, list(rest) + ["inplace=True"])
                if info is not None and 0 in info.mutates:
                    others = [a for a in args[1:] if isinstance(a, TensorV)]
                    return self.inplace_op(args[0], info, others, st, node, f"{short}(inplace=True)")
                return self.call_tensor_method(args[0], short + "_", args[1:], rest, st, node, fn_name=qual)
        if qual.startswith("torch.nn.functional.dropout") or short in ("dropout", "alpha_dropout"):
            training = kwargs.get("training", args[2] if len(args) > 2 else TRUE)
            p = kwargs.get("p", args[1] if len(args) > 1 else ConstV(0.5))
            if self.truth_of(training) is False or (isinstance(p, ConstV) and p.value == 0):
                return args[0] if args else UNKNOWN
        if qual in {"torch.split", "torch.chunk", "torch.unbind", "torch.tensor_split", "torch.hsplit",
                    "torch.vsplit"}:
            if args and isinstance(args[0], TensorV):
                return self.call_tensor_method(args[0], short, args[1:], kwargs, st, node)
        if qual == "torch.einsum" and len(args) >= 2:
            operands = self.slot_tensors(st, args[1]) if len(args) == 2 else [a for a in args[1:] if isinstance(a, TensorV)]
            if len(operands) >= 2:
                # The table measures einsum's operands as one varargs slot, which cannot say
                # "each operand is saved iff another one requires grad" (as measured for mm/bmm).
                return self.apply_op(st, _OtherOperands(len(operands)), operands, span, "einsum")[0]
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
            t = self.new_tensor(st, rg=bool(rg.value) if isinstance(rg, ConstV) else (None if rg else False),
                                node=node)
            return t
        if info is None:
            if not tensor_args:
                rg = kwargs.get("requires_grad")
                if isinstance(rg, ConstV) and rg.value is True:
                    return self.new_tensor(st, rg=True, node=node)
                return UNKNOWN
            # An op we know nothing about: connect the graph, save nothing, alias nothing.
            outs = self.apply_op(st, None, tensor_args, span, qual.rsplit(".", 1)[-1])
            return outs[0]
        if info.mutates:
            target_idx = info.mutates[0]
            if target_idx < len(tensor_args) and isinstance(tensor_args[target_idx], TensorV):
                target = tensor_args[target_idx]
                others = [a for i, a in enumerate(tensor_args) if i != target_idx]
                return self.inplace_op(target, info, others, st, node, qual.rsplit(".", 1)[-1] + "()")
        if qual.rsplit(".", 1)[-1] in REGRESSION_LOSSES and len(tensor_args) >= 2:
            self.check_target_detached(tensor_args[0], tensor_args[1], st, span)
        outs = self.apply_op(st, info, tensor_args, span, qual.rsplit(".", 1)[-1])
        if qual.rsplit(".", 1)[-1] == "linear" and len(tensor_args) >= 2 and outs:
            self.saves_a_view_of(outs[0], tensor_args[1], st)
        if qual.rsplit(".", 1)[-1] in SOFT_TARGET_LOSSES and len(tensor_args) >= 2 and outs and \
                st.t[outs[0].tid].grad_fn is not None:
            self.check_peer_target(tensor_args[0], tensor_args[1], st, span, st.t[outs[0].tid].grad_fn)
        if isinstance(out_kw, TensorV):
            self.inplace_op(out_kw, None, [outs[0]], st, node, f"{qual.rsplit('.', 1)[-1]}(out=...)")
            return out_kw
        if len(outs) == 1:
            return outs[0]
        return self.new_seq(list(outs), st, kind="tuple")

    def torch_autograd_call(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        span = self.span_of(node)
        outputs = args[0] if args else kwargs.get("outputs", kwargs.get("tensors", UNKNOWN))
        retain = kwargs.get("retain_graph")
        create = kwargs.get("create_graph")
        create_b = isinstance(create, ConstV) and create.value is True
        if retain is None:
            retain_b = create_b
        else:
            retain_b = self.truth_of(retain) is not False
        if qual.endswith(".grad"):
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            ran = self.do_backward(st, [outputs], span, retain=retain_b, accumulate=False,
                                   inputs=[inputs] if not isinstance(inputs, UnknownV) else ())
            n = len(self.slot_tensors(st, inputs)) or 1
            gnode = self.gradient_graph(st, ran, span) if create_b and st.grad_enabled else None
            grads = []
            for _ in range(n):
                g = self.new_tensor(st, rg=True if create_b else False, node=node, grad_fn=gnode)
                grads.append(g)
            return self.new_seq(grads, st, kind="tuple")
        inputs = kwargs.get("inputs")
        self.do_backward(st, [outputs], span, retain=retain_b,
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
            out = self.alias_tensor(st, x, kind="view", span=self.span_of(node), rg=info.rg,
                                    grad_fn=self.make_node(st, "make_dual", self.span_of(node), [x], (), st.next_seq())
                                    if info.rg is not False and st.grad_enabled else None)
            st.update_t(out.tid, dual=True)
            return out
        if name == "unpack_dual" and isinstance(x, TensorV):
            primal = self.apply_op(st, None, [x], self.span_of(node), "unpack_dual")[0]
            tangent = self.apply_op(st, None, [x], self.span_of(node), "tangent")[0]
            for t in (primal, tangent):
                st.update_t(t.tid, dual=False)
            return self.new_seq([primal, tangent], st, kind="tuple")
        if name == "dual_level":
            return ObjV(fresh_id())
        return UNKNOWN

    # ================================================================== tensor methods
    def call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        out = self._call_tensor_method(t, name, args, kwargs, st, node, fn_name)
        if name in WRAPS_NUMBER:
            self.note_wrapped_number(out, args, kwargs, st)
        return out

    def _call_tensor_method(self, t: TensorV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST, fn_name: str = "") -> Value:
        span = self.span_of(node)
        info_t = st.t.get(t.tid)
        if info_t is None:
            return UNKNOWN
        if name == "backward":
            retain = kwargs.get("retain_graph", args[1] if len(args) > 1 else None)
            create = kwargs.get("create_graph", args[2] if len(args) > 2 else None)
            create_b = isinstance(create, ConstV) and create.value is True
            retain_b = create_b if retain is None else self.truth_of(retain) is not False
            inputs = kwargs.get("inputs", args[3] if len(args) > 3 else None)
            self.do_backward(st, [t], span, retain=retain_b,
                             inputs=[inputs] if isinstance(inputs, (TensorV, SeqV)) else ())
            return NONE
        if name in NUMBER_METHODS and not (name == "type" and args):
            return UNKNOWN
        if name in NOT_TENSOR_METHODS:
            return UNKNOWN  # `.items()`: an opaque call's result that is a dict, not a tensor
        if name == "detach":
            return self.alias_tensor(st, t, kind="detach", span=span, rg=False, grad_fn=None)
        if name == "detach_":
            st.update_t(t.tid, rg=False, leaf=True, grad_fn=None, base=None)
            return t
        if name == "requires_grad_":
            flag = args[0] if args else kwargs.get("requires_grad", TRUE)
            b = self.truth_of(flag)
            if info_t.leaf or info_t.grad_fn is None:
                st.update_t(t.tid, rg=b if b is not None else None, leaf=True)
            return t
        if name in {"retain_grad", "register_hook", "share_memory_", "pin_memory", "record_stream"}:
            return NONE if name != "pin_memory" else t
        if name in {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "new", "new_empty_strided"}:
            rg = kwargs.get("requires_grad")
            return self.new_tensor(st, rg=True if isinstance(rg, ConstV) and rg.value is True else False, node=node)
        if name in {"split", "chunk", "unbind", "tensor_split", "split_with_sizes", "hsplit", "vsplit", "unflatten_"}:
            kinds = [arg_kind(st, a) for a in args]
            info = optable.lookup_method(name, kinds, kwargs.keys())
            diff = info.differentiable if info is not None else True
            rg = info_t.rg if st.grad_enabled and diff else False
            grad_fn = None
            if rg is not False:
                grad_fn = self.make_node(st, name, span, [t], (), st.next_seq())
            view = self.alias_tensor(st, t, kind="multi_view", span=span, rg=rg, grad_fn=grad_fn, opname=name)
            return self.new_seq([view], st, kind="homogeneous")
        if name in ("type_as", "to") and args and isinstance(args[0], TensorV) and args[0].tid in st.t:
            other = st.t[args[0].tid].dtype
            if other is not None and info_t.dtype is not None and other != info_t.dtype:
                out = self._copy_of(t, st, node, name)  # a dtype conversion (bool mask -> float): a copy
                st.update_t(out.tid, dtype=other)
                return out
        if name in {"float", "double", "half", "bfloat16"} and info_t.dtype in ("bool", "int"):
            out = self._copy_of(t, st, node, name)
            st.update_t(out.tid, dtype="float")
            return out
        if name in {"float", "double", "half", "bfloat16", "to", "cuda", "cpu", "type_as", "contiguous",
                    "type"} and not self._dtype_change(name, args, kwargs):
            if name == "contiguous" and info_t.expanded is not None:
                return self._copy_of(t, st, node, name)  # an expanded tensor is not contiguous: a copy
            if name in {"to", "cuda", "cpu", "double", "half", "bfloat16", "type_as", "type"} and \
                    info_t.rg is True and info_t.grad_fn is None:
                # a leaf moved to another device or dtype is a new, non-leaf tensor; on the same
                # one it is the leaf itself: we cannot tell, so it is neither for our rules
                out = self._copy_of(t, st, node, name)
                st.update_t(out.tid, counter=info_t.counter, storage=info_t.storage)
                return out
            return t  # may return the very same tensor object: shares everything
        if name in {"long", "int", "bool", "byte", "short", "char", "argmax", "argmin", "argsort", "nonzero",
                    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "sign", "round",
                    "floor", "ceil", "trunc"} and not name.endswith("_"):
            kinds = [arg_kind(st, a) for a in args]
            info = optable.lookup_method(name, kinds, kwargs.keys())
            if info is None or not info.differentiable:
                return self.new_tensor(st, rg=False, node=node, dtype=_RESULT_DTYPE.get(name))
        if name == "clone":
            return self._copy_of(t, st, node, name)
        kinds = [arg_kind(st, a) for a in args]
        info = optable.lookup_method(name, kinds, kwargs.keys())
        inplace = (name.endswith("_") and not name.endswith("__")) or (info is not None and 0 in info.mutates)
        opname = (fn_name.rsplit(".", 1)[-1] if fn_name else "") or name
        if inplace:
            others = [a for a in args if isinstance(a, TensorV) or arg_kind(st, a) == "L"]
            others += [v for v in kwargs.values() if isinstance(v, TensorV)]
            label = f"{opname}(inplace=True)" if fn_name else f".{name}()"
            return self.inplace_op(t, info, others, st, node, label)
        slots: List[Value] = [t] + [a for a in args if isinstance(a, TensorV) or arg_kind(st, a) == "L"]
        slots += [v for v in kwargs.values() if isinstance(v, TensorV)]
        if name in {"expand", "expand_as", "broadcast_to"} and (info is None or info.alias is None):
            return self.alias_tensor(st, t, kind="expand", span=span, rg=info_t.rg if st.grad_enabled else False,
                                     grad_fn=self.make_node(st, name, span, [t], (), st.next_seq())
                                     if st.grad_enabled and info_t.rg is not False else None)
        if info is None:
            if name.startswith("__") or name in ("apply_", "map_"):
                return UNKNOWN
            outs = self.apply_op(st, None, slots, span, name)
            return outs[0]
        outs = self.apply_op(st, info, slots, span, name)
        if len(outs) == 1:
            return outs[0]
        return self.new_seq(list(outs), st, kind="tuple")

    def _copy_of(self, t: TensorV, st: State, node: ast.AST, name: str) -> TensorV:
        info_t = st.t[t.tid]
        rg = info_t.rg if st.grad_enabled else False
        grad_fn = self.make_node(st, name, self.span_of(node), [t], (), st.next_seq()) if rg is not False else None
        out = self.new_tensor(st, rg=rg, grad_fn=grad_fn, node=node)
        st.update_t(out.tid, leaf=grad_fn is None, name=info_t.name)
        return out

    @staticmethod
    def _dtype_change(name: str, args: List[Value], kwargs: Dict[str, Value]) -> bool:
        if name == "type" and not args:
            return False
        if name in ("to", "type"):
            for a in list(args) + list(kwargs.values()):
                if isinstance(a, RefV) and a.kind == "torch" and a.name.split(".")[-1] in (
                        "long", "int", "int64", "int32", "bool", "uint8", "int8", "int16", "short"):
                    return True
        return False

    def inplace_op(self, target: TensorV, info: Any, others: Sequence[Value], st: State, node: ast.AST,
                   label: str, *, kind: str = "user", site: Optional[Span] = None) -> Value:
        span = self.span_of(node)
        stmt_span = span
        fix_facts = {"stmt_span": stmt_span, "target_text": self.receiver_text(node), "op": label,
                     "call_span": span, "form": "method"}
        self.do_write(st, target, label, span, kind=kind, site=site, fix_facts=fix_facts,
                      name=self.receiver_text(node) or "", others=others)
        opname = label.split("(")[0] + "_" if "(inplace" in label else label.strip(".()")
        self.inplace_autograd(st, target, info, others, span, opname,
                              report_span=site, call_span=span if site else None)
        return target

    def receiver_text(self, node: ast.AST) -> str:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not isinstance(
                self.eval_quiet(node.func.value), RefV):
            return self.text_of(node.func.value)
        if isinstance(node, ast.Call) and node.args:
            return self.text_of(node.args[0])
        if isinstance(node, ast.AugAssign):
            return self.text_of(node.target)
        return ""

    # ================================================================== attributes & indexing
    def eval_quiet(self, node: ast.AST) -> Value:
        """Is this receiver a module path (``F``, ``torch.nn.functional``)? Names only, no effects."""
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ("torch", "F", "nn", "th", "functional"):
            return ref_value("torch", root.id)
        return UNKNOWN

    def tensor_getattr(self, t: TensorV, attr: str, st: State, node: ast.AST) -> Value:
        info = st.t[t.tid]
        if attr == "data":
            tid = fresh_id()
            st.set_t(tid, make_tinfo(counter=tid, storage=info.storage, rg=False, leaf=True, data_alias=True, alias_of=t.tid,
                                     name=f"{info.name}.data" if info.name else "data", created=self.span_of(node),
                                     loop_ctx=st.loop_ctx, expanded=info.expanded))
            return tensor_value(tid)
        if attr == "grad":
            g = self.new_tensor(st, rg=False, node=node)
            st.update_t(g.tid, grad_site=True, name=f"{info.name}.grad" if info.name else "grad")
            return g
        if attr in {"T", "mT", "H", "mH", "real", "imag"}:
            grad_fn = None
            rg = info.rg if st.grad_enabled else False
            if rg is not False:
                grad_fn = self.make_node(st, attr, self.span_of(node), [t], (), st.next_seq())
            return self.alias_tensor(st, t, kind="view", span=self.span_of(node), rg=rg, grad_fn=grad_fn)
        if attr == "requires_grad":
            return UNKNOWN if info.rg is None else ConstV(info.rg)
        if attr == "is_leaf":
            return ConstV(info.grad_fn is None)
        if attr in {"shape", "device", "dtype", "ndim", "grad_fn", "layout", "names", "is_cuda"}:
            return UNKNOWN
        return ref_value("tmethod", attr, None, t)

    def tensor_setattr(self, t: TensorV, attr: str, value: Value, st: State, target: ast.Attribute,
                       stmt: ast.AST) -> None:
        info = st.t[t.tid]
        if attr == "requires_grad":
            b = self.truth_of(value)
            if info.grad_fn is None:
                st.update_t(t.tid, rg=b, leaf=True)
        elif attr == "data" and isinstance(value, TensorV):
            vinfo = st.t[value.tid]
            if vinfo.expanded is not None and (info.param or info.rg):
                rhs = stmt.value if isinstance(stmt, ast.Assign) else None
                self.emit(Event("expanded_param_data", self.span_of(stmt), {"name": self.text_of(target.value)},
                                related=(Related(vinfo.expanded, "expanded here", "created"),),
                                fix_facts={"rhs_span": self.span_of(rhs) if rhs is not None else None}))
            if info.storage != vinfo.storage:
                # `w.data = new`: whoever saved `w` itself reads the new data in backward,
                # without a version bump (a pruning schedule applied before loss.backward())
                seq = st.next_seq()
                w = Write(counter=info.counter, storage=info.storage, version_after=st.version(info.counter),
                          seq=seq, span=self.span_of(stmt), op="`.data =` reassignment", kind="data_assign",
                          name=self.text_of(target.value), tid=t.tid)
                dw = st.own("data_writes")
                dw[info.storage] = dw.get(info.storage, ()) + (w,)
            st.update_t(t.tid, storage=vinfo.storage)
        elif attr == "grad":
            grads = st.own("grads")
            grads.pop(t.tid, None)

    def index_is_advanced(self, sl: ast.expr, st: State) -> bool:
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for p in parts:
            if isinstance(p, (ast.Slice, ast.Constant)) or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)):
                continue
            if isinstance(p, ast.Name) and p.id in ("None", "Ellipsis"):
                continue
            v = self.eval(p, st)
            if isinstance(v, (TensorV, SeqV)):
                return True
        return False

    @staticmethod
    def index_is_single(sl: ast.expr) -> bool:
        parts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        for p in parts:
            if isinstance(p, ast.Constant) and isinstance(p.value, int):
                continue
            if isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant):
                continue
            return False
        return True

    def tensor_getitem(self, t: TensorV, sub: Optional[ast.Subscript], st: State, node: Optional[ast.AST]) -> Value:
        info = st.t[t.tid]
        span = self.span_of(node) if node is not None else (info.created or Span(1, 1, 1, 1))
        rg = info.rg if st.grad_enabled else False
        advanced = sub is not None and self.index_is_advanced(sub.slice, st)
        grad_fn = self.make_node(st, "index" if advanced else "select", span, [t], (), st.next_seq()) \
            if rg is not False else None
        if advanced and grad_fn is not None:
            grad_fn.holds = True  # IndexBackward keeps the index tensors: freed by a backward
        if advanced:
            out = self.new_tensor(st, rg=rg, grad_fn=grad_fn, node=node)
            st.update_t(out.tid, leaf=grad_fn is None, logprob="action" if info.logprob else "")
            return out
        out = self.alias_tensor(st, t, kind="view", span=span, rg=rg, grad_fn=grad_fn)
        if info.logprob == "dist" and sub is not None:
            st.update_t(out.tid, logprob="action")  # `log_probs[:, a]`: the chosen action's
        return out

    def tensor_setitem(self, t: TensorV, target: ast.Subscript, value: Value, st: State, stmt: ast.AST) -> None:
        span = self.span_of(stmt)
        self.index_is_advanced(target.slice, st)
        name = self.text_of(target.value)
        if isinstance(value, TensorV) and isinstance(stmt, ast.Assign) and self.overlapping_rhs(target, stmt.value):
            vi, ti = st.t[value.tid], st.t[t.tid]
            if vi.storage == ti.storage:
                self.emit(Event("overlapping_assign", span, {
                    "name": name, "desc": f"the right-hand side is a view of `{name}` itself; the copy overlaps "
                                          "its own destination and raises"},
                                fix_facts={"rhs_span": self.span_of(stmt.value)}))
                raise Halt()
        fix_facts = {"stmt_span": span, "target_text": name, "op": "slice assignment", "form": "setitem",
                     "indent_row": span.row}
        self.do_write(st, t, "slice assignment" if not isinstance(stmt, ast.AugAssign) else "augmented assignment",
                      span, name=name, single_element=self.index_is_single(target.slice), fix_facts=fix_facts,
                      others=(value,))
        self.inplace_autograd(st, t, None, [value] if isinstance(value, TensorV) else [], span, "setitem")

    def overlapping_rhs(self, target: ast.Subscript, rhs: ast.expr) -> bool:
        """``x[i] = x[i].transpose(...)``: the source is a re-laid-out view of the destination."""
        cur = rhs
        saw_layout = False
        while True:
            if isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute):
                if cur.func.attr in ("clone", "contiguous", "copy", "detach_", "to", "float", "numpy"):
                    return False
                saw_layout |= cur.func.attr in LAYOUT_VIEWS
                cur = cur.func.value
            elif isinstance(cur, ast.Attribute):
                saw_layout |= cur.attr in LAYOUT_VIEWS
                cur = cur.value
            else:
                break
        return saw_layout and isinstance(cur, ast.Subscript) and \
            ast.dump(cur.value) == ast.dump(target.value) and ast.dump(cur.slice) == ast.dump(target.slice)

    # ================================================================== arithmetic
    def tensor_binop(self, left: Value, op: ast.operator, right: Value, st: State, node: ast.AST) -> Value:
        name = BINOP_METHOD.get(type(op))
        if name is None:
            return UNKNOWN
        if isinstance(left, TensorV):
            return self.call_tensor_method(left, name, [right], {}, st, node)
        if isinstance(right, TensorV):
            if name in {"add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor"}:
                return self.call_tensor_method(right, name, [left], {}, st, node)
            rname = {"sub": "__rsub__", "div": "__rtruediv__", "pow": "__rpow__", "matmul": "__rmatmul__",
                     "floor_divide": "__rfloordiv__", "remainder": "__rmod__"}.get(name, name)
            kinds = [arg_kind(st, left)]
            info = optable.lookup_method(rname, kinds)
            span = self.span_of(node)
            if info is None:
                info = optable.lookup_function("torch." + name, [arg_kind(st, left), "T"])
                outs = self.apply_op(st, info, [right] if not isinstance(left, TensorV) else [left, right], span,
                                     name) if info is not None and info.slots[:1] == ("other",) else \
                    self.apply_op(st, None, [right], span, name)
                return outs[0]
            return self.apply_op(st, info, [right], span, name)[0]
        return UNKNOWN

    def tensor_inplace_binop(self, cur: TensorV, op: ast.operator, rhs: Value, st: State, stmt: ast.AugAssign) -> None:
        name = INPLACE_METHOD.get(type(op))
        span = self.span_of(stmt)
        if name is None:  # e.g. @= : Python falls back to x = x @ y
            res = self.tensor_binop(cur, op, rhs, st, stmt)
            self.assign(stmt.target, res, st, stmt)
            return
        kinds = [arg_kind(st, rhs)]
        info = optable.lookup_method(name, kinds)
        target_text = self.text_of(stmt.target)
        fix_facts = {"stmt_span": span, "target_text": target_text, "op": f"`{target_text} {_OPSYM.get(type(op), '?')}= ...`",
                     "form": "augassign", "binop": _OPSYM.get(type(op), "+")}
        label = f"`{_OPSYM.get(type(op), '?')}=`"
        self.do_write(st, cur, label, span, name=target_text, fix_facts=fix_facts,
                      single_element=isinstance(stmt.target, ast.Subscript) and self.index_is_single(stmt.target.slice),
                      others=(rhs,))
        others = [rhs] if isinstance(rhs, TensorV) else []
        self.inplace_autograd(st, cur, info, others, span, name)

    def check_target_detached(self, pred: Value, target: Value, st: State, span: Span) -> None:
        """GW505: a regression target that requires grad through the very parameters of the
        prediction (a bootstrap target, a teacher that is the student): gradients flow into
        the target too. Reported where the target's forward went through those parameters."""
        if not (isinstance(pred, TensorV) and isinstance(target, TensorV)):
            return
        pi, ti = st.t.get(pred.tid), st.t.get(target.tid)
        if pi is None or ti is None or pi.rg is not True or ti.rg is not True or not st.grad_enabled:
            return
        if pi.grad_fn is None or ti.grad_fn is None:
            return
        shared = self.leaves_under(pi.grad_fn) & self.leaves_under(ti.grad_fn)
        params = {t for t in shared if st.t.get(t) is not None and st.t[t].param}
        if not params:
            return
        own = {t for t in self.leaves_under(pi.grad_fn) - shared if st.t.get(t) is not None and st.t[t].param}
        if own:
            # the prediction also goes through parameters of its own (an encoder before a shared
            # discriminator: feature matching): the shared part acts as a fixed feature map for
            # this loss, not as a bootstrap target of the model being trained
            return
        pred_nodes = self._node_ids(pi.grad_fn)
        best = None
        stack, seen = [ti.grad_fn], set()
        while stack:
            n = stack.pop()
            if n.id in seen or n.id in pred_nodes:
                continue
            seen.add(n.id)
            if set(n.leaves) & params and (best is None or n.seq > best.seq):
                best = n
            stack.extend(n.inputs)
        if best is None:
            return
        where = ti.held_at or self.site_here(best.stack, best.span)  # kept on an object: detach it there
        self.emit(Event("target_not_detached", where, {"name": ti.name or "target", "loss_line": span.row},
                        related=(Related(span, "the loss that uses it as a target", "backward"),),
                        fix_facts={"use_span": where}))

    def check_peer_target(self, pred: Value, target: Value, st: State, span: Span, loss_node: Any) -> None:
        """GW507: the target distribution of a distillation / mutual-learning loss is another
        model's prediction that still carries its graph: the loss also pulls that model toward
        this one. Watched until a backward reaches the loss, and reported only when an
        optimizer trains those parameters."""
        if not (isinstance(pred, TensorV) and isinstance(target, TensorV)) or not st.grad_enabled:
            return
        pi, ti = st.t.get(pred.tid), st.t.get(target.tid)
        if pi is None or ti is None or ti.rg is not True or ti.grad_fn is None or pi.grad_fn is None:
            return
        if ti.dtype in ("int", "bool"):
            return
        mine = {t for t in self.leaves_under(pi.grad_fn) if t in st.t and st.t[t].param}
        behind = {t for t in self.leaves_under(ti.grad_fn) if t in st.t and st.t[t].param}
        theirs = behind - mine
        if mine and behind and behind == mine:
            # the model's own prediction as its soft target (VAT's clean prediction, a
            # consistency target): GW505, reported where the target branches off
            self.watched[loss_node.id] = Event("target_not_detached", span, {
                "name": ti.name or "target", "loss_line": span.row, "target_node": ti.grad_fn,
                "theirs": tuple(behind)}, (Related(span, "the loss that uses it as a target", "backward"),))
            return
        if not mine or not theirs:
            return  # no model of its own behind the target
        where = ti.held_at or ti.stored_at or self.site_here(ti.grad_fn.stack, ti.grad_fn.span)
        self.watched[loss_node.id] = Event("peer_target_not_detached", where, {
            "name": f" `{ti.name}`" if ti.name else "", "loss_line": span.row, "theirs": tuple(theirs),
            "target_node": ti.grad_fn},
            (Related(span, "used as the target distribution here", "call"),))

    @staticmethod
    def _node_ids(root: Any) -> set:
        return {n.id for n in walk_nodes([root])}

    # ================================================================== nn.Parameter / init
    def make_parameter(self, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        data = args[0] if args else kwargs.get("data", UNKNOWN)
        rgv = kwargs.get("requires_grad", args[1] if len(args) > 1 else TRUE)
        rg = self.truth_of(rgv)
        p = self.new_tensor(st, rg=True if rg is None else rg, node=node, param=True)
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
                self.do_write(st, args[0], qual.rsplit(".", 1)[-1] + "()", self.span_of(node),
                              name=self.text_of(node.args[0]) if isinstance(node, ast.Call) and node.args else "")
            finally:
                st.grad_enabled = saved
            return args[0]
        return UNKNOWN

    # ================================================================== modules
    def is_module_obj(self, v: Value, st: State) -> bool:
        return isinstance(v, ObjV) and "__module__" in st.attrs(v.oid)

    def construct_container(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        for k, v in (("__torch__", ConstV(qual)), ("__module__", TRUE), ("training", TRUE),
                     ("__span__", ConstV(self.span_of(node)))):
            st.set_attr(obj.oid, k, v)
        children: List[Value] = []
        keys: List[Value] = []
        kind = "list"
        if qual.endswith("Sequential"):
            if len(args) == 1 and isinstance(args[0], DictV):
                for k, v in st.dicts.get(args[0].did, ()):
                    keys.append(ConstV(k[1]))
                    children.append(v)
            else:
                children = list(args)
                keys = [ConstV(str(i)) for i in range(len(children))]
        elif args:
            src = args[0]
            if isinstance(src, SeqV):
                children = list(st.lists.get(src.lid, ()))
                kind = "homogeneous" if src.kind == "homogeneous" else "list"
                keys = [ConstV(str(i)) for i in range(len(children))]
            elif isinstance(src, DictV):
                for k, v in st.dicts.get(src.did, ()):
                    keys.append(ConstV(k[1]))
                    children.append(v)
        st.set_attr(obj.oid, "__children__", self.new_seq(children, st, kind=kind))
        st.set_attr(obj.oid, "__keys__", self.new_seq(keys, st))
        return obj

    def construct_torch_module(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        span = self.span_of(node)
        short = qual.rsplit(".", 1)[-1]
        for k, v in (("__torch__", ConstV(qual)), ("__module__", TRUE), ("training", TRUE), ("__span__", ConstV(span))):
            st.set_attr(obj.oid, k, v)
        inplace = kwargs.get("inplace")
        if inplace is None:
            # nn.ReLU(True), nn.LeakyReLU(0.2, True), nn.Dropout(0.5, True), nn.ELU(1.0, True) ...
            pos = {"ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Mish": 0, "Hardswish": 0, "Hardsigmoid": 0,
                   "LeakyReLU": 1, "ELU": 1, "CELU": 1, "Dropout": 1, "Dropout1d": 1, "Dropout2d": 1,
                   "Dropout3d": 1, "AlphaDropout": 1, "Threshold": 2, "Hardtanh": 2, "RReLU": 2}.get(short)
            inplace = args[pos] if pos is not None and len(args) > pos else FALSE
        st.set_attr(obj.oid, "inplace", inplace if isinstance(inplace, ConstV) else FALSE)
        if short.startswith("Dropout") or short.endswith("Dropout"):
            p = kwargs.get("p", args[0] if args else ConstV(0.5))
            st.set_attr(obj.oid, "p", p)
        if short in ("Embedding", "EmbeddingBag"):
            max_norm = kwargs.get("max_norm", args[3] if short == "Embedding" and len(args) > 3 else
                                  (args[2] if short == "EmbeddingBag" and len(args) > 2 else NONE))
            st.set_attr(obj.oid, "max_norm", max_norm)
        info = optable.lookup_module(qual)
        if info is not None:
            no_bias = self.truth_of(kwargs.get("bias", TRUE)) is False
            no_affine = self.truth_of(kwargs.get("affine", kwargs.get("elementwise_affine", TRUE))) is False
            no_stats = self.truth_of(kwargs.get("track_running_stats", TRUE)) is False
            for slot in info.slots:
                if not PARAM_SLOT.match(slot):
                    continue
                if slot.startswith("bias") and no_bias or slot in ("weight", "bias") and no_affine and "Norm" in short:
                    st.set_attr(obj.oid, slot, NONE)
                    continue
                if slot.startswith("running_") or slot == "num_batches_tracked":
                    if no_stats:
                        st.set_attr(obj.oid, slot, NONE)
                        continue
                    t = self.new_tensor(st, rg=False, node=node, name=slot)
                else:
                    t = self.new_tensor(st, rg=True, node=node, name=slot, param=True)
                st.set_attr(obj.oid, slot, t)
        return obj

    def module_params(self, obj: ObjV, st: State, prefix: str = "", seen: Optional[set] = None,
                      buffers: bool = False) -> List[Tuple[str, TensorV]]:
        seen = set() if seen is None else seen
        if obj.oid in seen:
            return []
        seen.add(obj.oid)
        out: List[Tuple[str, TensorV]] = []
        for k, v in st.attrs(obj.oid).items():
            if k.startswith("__") and k != "__children__":
                continue
            if isinstance(v, TensorV):
                info = st.t.get(v.tid)
                if info is not None and (info.param or (buffers and not info.param)):
                    out.append((prefix + k, v))
            elif isinstance(v, ObjV) and self.is_module_obj(v, st):
                out.extend(self.module_params(v, st, prefix + k + ".", seen, buffers))
            elif k == "__children__" and isinstance(v, SeqV):
                keys = st.lists.get(st.attrs(obj.oid).get("__keys__", SeqV(-1)).lid, ()) \
                    if isinstance(st.attrs(obj.oid).get("__keys__"), SeqV) else ()
                for i, child in enumerate(st.lists.get(v.lid, ())):
                    key = keys[i].value if i < len(keys) and isinstance(keys[i], ConstV) else str(i)
                    if isinstance(child, ObjV):
                        out.extend(self.module_params(child, st, f"{prefix}{key}.", seen, buffers))
                    elif isinstance(child, TensorV):
                        out.append((f"{prefix}{key}", child))
            elif isinstance(v, SeqV) and k != "__keys__":
                for i, child in enumerate(st.lists.get(v.lid, ())):
                    if isinstance(child, ObjV) and self.is_module_obj(child, st):
                        out.extend(self.module_params(child, st, f"{prefix}{k}.{i}.", seen, buffers))
        return out

    def submodules(self, obj: ObjV, st: State, prefix: str = "", seen: Optional[set] = None) -> List[Tuple[str, ObjV]]:
        seen = set() if seen is None else seen
        if obj.oid in seen:
            return []
        seen.add(obj.oid)
        out: List[Tuple[str, ObjV]] = [(prefix.rstrip("."), obj)]
        attrs = st.attrs(obj.oid)
        for k, v in attrs.items():
            if isinstance(v, ObjV) and self.is_module_obj(v, st) and not k.startswith("__"):
                out.extend(self.submodules(v, st, prefix + k + ".", seen))
            elif k == "__children__" and isinstance(v, SeqV):
                keys_v = attrs.get("__keys__")
                keys = st.lists.get(keys_v.lid, ()) if isinstance(keys_v, SeqV) else ()
                for i, child in enumerate(st.lists.get(v.lid, ())):
                    key = keys[i].value if i < len(keys) and isinstance(keys[i], ConstV) else str(i)
                    if isinstance(child, ObjV) and self.is_module_obj(child, st):
                        out.extend(self.submodules(child, st, f"{prefix}{key}.", seen))
        return out

    def module_setattr(self, obj: ObjV, attr: str, value: Value, st: State) -> None:
        st.set_attr(obj.oid, attr, value)
        if isinstance(value, ObjV):
            owner = st.attrs(obj.oid).get("__name__")
            self.name_params(value, f"{owner.value}.{attr}" if isinstance(owner, ConstV) else f"self.{attr}", st)

    def name_params(self, obj: ObjV, prefix: str, st: State) -> None:
        """Give a freshly built torch module's parameters names for messages (`D.0.weight`)."""
        attrs = st.attrs(obj.oid)
        if "__name__" in attrs or "__module__" not in attrs:
            return
        st.set_attr(obj.oid, "__name__", ConstV(prefix))
        for k, v in attrs.items():
            if isinstance(v, TensorV) and not k.startswith("__"):
                info = st.t.get(v.tid)
                if info is not None and info.name == k:
                    st.update_t(v.tid, name=f"{prefix}.{k}")
        children = attrs.get("__children__")
        if isinstance(children, SeqV) and children.kind != "homogeneous":
            for i, child in enumerate(st.lists.get(children.lid, ())[:16]):
                if isinstance(child, ObjV):
                    self.name_params(child, f"{prefix}.{i}", st)

    def call_object(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                    site: Optional[Span] = None) -> Value:
        hooks = st.attrs(obj.oid).get("__hooks__")
        if not isinstance(hooks, ConstV) or not hooks.value:
            return self._call_object(obj, args, kwargs, st, node, site)
        # nn.Module.__call__ with hooks: pre-hooks may replace the inputs, forward hooks the
        # output; a hook that writes into the output in place writes into what the module's
        # backward saved (the usual ablation / activation-patching hazard).
        for kind, fn in hooks.value:
            if kind == "pre":
                ret = self.call(fn, [obj, self.new_seq(list(args), st, kind="tuple")], {}, st, node)
                if isinstance(ret, SeqV) and ret.kind == "tuple":
                    args = list(st.lists.get(ret.lid, ()))
                elif not isinstance(ret, (ConstV, UnknownV)):
                    args = [ret]
        out = self._call_object(obj, args, kwargs, st, node, site)
        for kind, fn in hooks.value:
            if kind == "forward":
                ret = self.call(fn, [obj, self.new_seq(list(args), st, kind="tuple"), out], {}, st, node)
                if not isinstance(ret, (ConstV, UnknownV)):
                    out = ret
        return out

    def _call_object(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                     site: Optional[Span] = None) -> Value:
        attrs = st.attrs(obj.oid)
        cls = attrs.get("__class__")
        if "__averaged__" in attrs and isinstance(attrs.get("module"), ObjV):
            return self.call_object(attrs["module"], args, kwargs, st, node, site)
        if "__opaque__" in attrs:
            tensors = [a for a in args if isinstance(a, TensorV)]
            return self.apply_op(st, None, tensors, self.span_of(node), "forward")[0] if tensors else UNKNOWN
        if isinstance(cls, RefV) and cls.kind == "class":
            found = cls.target.find_method("forward") if cls.target.is_module else cls.target.find_method("__call__")
            if found:
                return self.call_function(found[1], [obj] + args, kwargs, st, self.span_of(node), bound_self=True)
            torch_q = attrs.get("__torch__")
            if isinstance(torch_q, ConstV):  # a subclass of a torch module keeps its forward
                return self.call_torch_module(obj, torch_q.value, args, kwargs, st, node, site)
            return UNKNOWN
        torch_q = attrs.get("__torch__")
        if isinstance(torch_q, ConstV):
            return self.call_torch_module(obj, torch_q.value, args, kwargs, st, node, site)
        if "__gradmode__" in attrs:  # used as a decorator: torch.no_grad()(fn)
            return args[0] if args else UNKNOWN
        return UNKNOWN

    def call_torch_module(self, obj: ObjV, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                          node: ast.AST, site: Optional[Span]) -> Value:
        attrs = st.attrs(obj.oid)
        short = qual.rsplit(".", 1)[-1]
        span = self.span_of(node)
        if short == "Sequential":
            x = args[0] if args else UNKNOWN
            children = attrs.get("__children__")
            for child in (st.lists.get(children.lid, ()) if isinstance(children, SeqV) else ()):
                if isinstance(child, ObjV):
                    csite = st.attrs(child.oid).get("__span__")
                    x = self.call_object(child, [x], {}, st, node, site=csite.value if isinstance(csite, ConstV) else None)
            return x
        if short in ("ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
            return UNKNOWN
        if short == "Identity":
            return args[0] if args else UNKNOWN
        training = self.truth_of(attrs.get("training", TRUE)) is not False
        inplace = self.truth_of(attrs.get("inplace", FALSE)) is True
        x = args[0] if args else UNKNOWN
        if "Dropout" in short:
            p = attrs.get("p")
            if not training or (isinstance(p, ConstV) and p.value == 0):
                return x
        if short in ("Embedding", "EmbeddingBag"):
            self.embedding_renorm(st, attrs.get("weight"), attrs.get("max_norm"), span, site)
        info = optable.lookup_module(qual, inplace=inplace, training=training)
        flipped = attrs.get("__inplace_at__")
        if inplace and site is not None and isinstance(flipped, ConstV):
            # run by a container: `m.inplace = True`, set after construction, is the line to
            # change (a module called by name is reported at its call, like any in-place op)
            site = flipped.value
        report = site or span
        if inplace and isinstance(x, TensorV) and (info is None or 0 in info.mutates or "Dropout" in short):
            label = f"{short}(inplace=True)"
            self.do_write(st, x, label, span, kind="module", site=site, name=self.text_of(node.args[0])
                          if isinstance(node, ast.Call) and node.args and site is None else "",
                          fix_facts={"module_span": attrs["__span__"].value if isinstance(attrs.get("__span__"), ConstV) else None,
                                     "form": "module_inplace", "op": label})
            self.inplace_autograd(st, x, info, [], span, short, report_span=report, call_span=span)
            return x
        if info is None:
            tensors = [a for a in args if isinstance(a, TensorV)]
            params = [v for k, v in attrs.items() if isinstance(v, TensorV) and st.t[v.tid].param]
            force = True if params and st.grad_enabled else None
            outs = self.apply_op(st, None, tensors + params, span, short, report_span=report, force_rg=force)
            return outs[0] if tensors or params else UNKNOWN
        slots: List[Value] = []
        n_inputs = 0
        for slot in info.slots:
            if PARAM_SLOT.match(slot):
                slots.append(attrs.get(slot, NONE))
            else:
                slots.append(args[n_inputs] if n_inputs < len(args) else kwargs.get(slot, NONE))
                n_inputs += 1
        if short in REGRESSION_LOSS_MODULES and len(args) >= 2:
            self.check_target_detached(args[0], args[1], st, span)
        outs = self.apply_op(st, info, slots, span, short, report_span=report, call_span=span if site else None)
        if short == "Linear" and outs:
            self.saves_a_view_of(outs[0], attrs.get("weight"), st)
        if short in SOFT_TARGET_LOSS_MODULES and len(args) >= 2 and outs and st.t[outs[0].tid].grad_fn is not None:
            self.check_peer_target(args[0], args[1], st, span, st.t[outs[0].tid].grad_fn)
        if short in ("LSTM",):
            hc = self.new_seq(outs[1:3] if len(outs) >= 3 else [outs[0], outs[0]], st, kind="tuple")
            return self.new_seq([outs[0], hc], st, kind="tuple")
        if short in ("GRU", "RNN"):
            return self.new_seq([outs[0], outs[1] if len(outs) > 1 else outs[0]], st, kind="tuple")
        if short == "LSTMCell":
            return self.new_seq([outs[0], outs[1] if len(outs) > 1 else outs[0]], st, kind="tuple")
        if short == "MultiheadAttention":
            return self.new_seq([outs[0], outs[1] if len(outs) > 1 else self.new_tensor(st, rg=False)], st,
                                kind="tuple")
        if len(outs) == 1:
            return outs[0]
        return self.new_seq(list(outs), st, kind="tuple")

    def object_getitem(self, obj: ObjV, idx: Value, st: State) -> Value:
        attrs = st.attrs(obj.oid)
        children = attrs.get("__children__")
        if not isinstance(children, SeqV):
            return UNKNOWN
        items = st.lists.get(children.lid, ())
        keys_v = attrs.get("__keys__")
        keys = st.lists.get(keys_v.lid, ()) if isinstance(keys_v, SeqV) else ()
        if isinstance(idx, ConstV):
            if isinstance(idx.value, int) and -len(items) <= idx.value < len(items) and children.kind != "homogeneous":
                return items[idx.value]
            for k, v in zip(keys, items):
                if isinstance(k, ConstV) and k.value == idx.value:
                    return v
        if items and (children.kind == "homogeneous" or self.same_class(items, st) or len(items) == 1):
            return items[0]
        return UNKNOWN

    def object_iter_element(self, obj: ObjV, st: State) -> Value:
        children = st.attrs(obj.oid).get("__children__")
        if isinstance(children, SeqV):
            return self.element_of(children, st)
        return UNKNOWN

    # ================================================================== object methods
    def builtin_object_attr(self, obj: ObjV, attr: str, st: State) -> Value:
        attrs = st.attrs(obj.oid)
        if "__ctx__" in attrs:
            if attr in ("saved_tensors", "saved_variables"):
                return self.ctx_saved_tensors(obj, st)
            if attr == "needs_input_grad":
                return UNKNOWN
        if attr == "training" and "__module__" in attrs:
            return TRUE
        if attr in ("__class__",):
            return UNKNOWN
        return ref_value("omethod", attr, None, obj)

    def call_object_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST) -> Value:
        attrs = st.attrs(obj.oid)
        if "__optim__" in attrs:
            return self.optimizer_method(obj, name, args, kwargs, st, node)
        if "__ctx__" in attrs:
            return self.ctx_method(obj, name, args, st, node)
        if "__dist__" in attrs:
            return self.distribution_method(obj, name, args, kwargs, st, node)
        if "__scaler__" in attrs:  # torch.amp.GradScaler: scale the loss, step the optimizer
            if name == "scale" and args and isinstance(args[0], TensorV):
                return self.apply_op(st, None, [args[0]], self.span_of(node), "scale")[0]
            if name == "step" and args and isinstance(args[0], ObjV) and "__optim__" in st.attrs(args[0].oid):
                return self.optimizer_method(args[0], "step", args[1:], kwargs, st, node)
            return NONE
        if "__module__" in attrs:
            return self.module_method(obj, name, args, kwargs, st, node)
        if "__hook_of__" in attrs and name == "remove":
            owner, entry = attrs["__hook_of__"].value
            hooks = st.attrs(owner).get("__hooks__")
            if isinstance(hooks, ConstV):
                st.set_attr(owner, "__hooks__", ConstV(tuple(h for h in hooks.value if h is not entry)))
            return NONE
        return UNKNOWN

    def module_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                      node: ast.AST) -> Value:
        if name in ("parameters", "named_parameters", "buffers", "named_buffers"):
            params = self.module_params(obj, st, buffers=name.endswith("buffers"))
            if name.endswith("buffers"):
                params = [(n, t) for n, t in params if not st.t[t.tid].param]
            if name.startswith("named"):
                return self.new_seq([self.new_seq([ConstV(n), t], st, kind="tuple") for n, t in params], st)
            return self.new_seq([t for _, t in params], st, kind="list" if len(params) else "list")
        if name in ("modules", "named_modules", "children", "named_children"):
            mods = self.submodules(obj, st)
            if name in ("children", "named_children"):
                mods = [(n, m) for n, m in mods[1:] if "." not in n]
            if name.startswith("named"):
                return self.new_seq([self.new_seq([ConstV(n), m], st, kind="tuple") for n, m in mods], st)
            return self.new_seq([m for _, m in mods], st)
        if name in ("train", "eval"):
            mode = name == "train" and self.truth_of(args[0] if args else kwargs.get("mode", TRUE)) is not False
            for _, m in self.submodules(obj, st):
                st.set_attr(m.oid, "training", ConstV(mode))
            return obj
        if name in ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "share_memory"):
            return obj
        if name == "update_parameters" and "__averaged__" in st.attrs(obj.oid):
            owner = self.receiver_text(node) or "averaged_model"
            self.update_in_place(st, [t.tid for _, t in self.module_params(obj, st)],
                                 f"{owner}.update_parameters()", self.span_of(node), owner)
            return NONE
        if name in ("register_forward_hook", "register_forward_pre_hook"):
            fn = args[0] if args else kwargs.get("hook", UNKNOWN)
            if not isinstance(fn, RefV) or kwargs.get("with_kwargs") not in (None, FALSE):
                return UNKNOWN
            entry = ("forward" if name == "register_forward_hook" else "pre", fn)
            hooks = st.attrs(obj.oid).get("__hooks__")
            st.set_attr(obj.oid, "__hooks__", ConstV((hooks.value if isinstance(hooks, ConstV) else ()) + (entry,)))
            handle = ObjV(fresh_id())
            st.set_attr(handle.oid, "__hook_of__", ConstV((obj.oid, entry)))
            return handle
        if name == "requires_grad_":
            flag = self.truth_of(args[0] if args else kwargs.get("requires_grad", TRUE))
            for _, t in self.module_params(obj, st):
                st.update_t(t.tid, rg=flag)
            return obj
        if name == "zero_grad":
            grads = st.own("grads")
            for _, t in self.module_params(obj, st):
                grads.pop(t.tid, None)
            return NONE
        if name == "state_dict":
            d = DictV(fresh_id())
            entries = []
            for n, t in self.module_params(obj, st, buffers=True):
                entries.append((("c", n), self.alias_tensor(st, t, kind="detach", span=self.span_of(node),
                                                              rg=False, grad_fn=None)))
            st.own("dicts")[d.did] = tuple(entries)
            return d
        children = st.attrs(obj.oid).get("__children__")
        if isinstance(children, SeqV) and (name in ("append", "extend") and args or
                                           name in ("add_module", "register_module") and len(args) >= 2):
            # a container grown after construction (``model.add_module("relu_1", layer)``,
            # ``layers.append(block)``): its forward runs what was added, in order
            keys_v = st.attrs(obj.oid).get("__keys__")
            keys = list(st.lists.get(keys_v.lid, ())) if isinstance(keys_v, SeqV) else []
            kids = list(st.lists.get(children.lid, ()))
            if name == "extend":
                more = self.known_items(args[0], st)
                new = more if more is not None else [self.element_of(args[0], st)]
                names = [ConstV(str(len(kids) + i)) for i in range(len(new))]
            elif name == "append":
                new, names = [args[0]], [ConstV(str(len(kids)))]
            else:
                new, names = [args[1]], [args[0]]
            st.own("lists")[children.lid] = tuple(kids + new)
            if isinstance(keys_v, SeqV):
                st.own("lists")[keys_v.lid] = tuple(keys + names)
            return NONE
        if name in ("register_buffer", "register_parameter", "add_module", "register_module"):
            if len(args) >= 2 and isinstance(args[0], ConstV):
                val = args[1]
                if name == "register_buffer" and isinstance(val, TensorV):
                    st.update_t(val.tid, name=f"self.{args[0].value}")
                    self.note_store(val, st, node, held=True)
                st.set_attr(obj.oid, str(args[0].value), val)
            return NONE
        if name == "forward":
            return self.call_object(obj, args, kwargs, st, node)
        if name == "apply":
            if args:
                for _, m in self.submodules(obj, st):
                    self.call(args[0], [m], {}, st, node)
            return obj
        if name in ("get_submodule",):
            return UNKNOWN
        return UNKNOWN

    # ================================================================== optimizers
    def construct_optimizer(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        tids = self.collect_params(params, st)
        obj = ObjV(fresh_id())
        fused = kwargs.get("fused")
        st.set_attr(obj.oid, "__optim__", ConstV(qual))
        st.set_attr(obj.oid, "__params__", ConstV(tuple(tids)))
        st.set_attr(obj.oid, "__fused__", ConstV(isinstance(fused, ConstV) and fused.value is True))
        group = DictV(fresh_id())
        st.own("dicts")[group.did] = ((("c", "params"), self.new_seq([tensor_value(t) for t in tids], st)),)
        st.set_attr(obj.oid, "param_groups", self.new_seq([group], st))
        st.set_attr(obj.oid, "state", DictV(fresh_id()))
        meta = st.own("meta")
        opts = dict(meta.get("optimizers", {}))
        opts[obj.oid] = tuple(tids)
        meta["optimizers"] = opts
        return obj

    def collect_params(self, v: Value, st: State, depth: int = 0) -> List[int]:
        if depth > 4:
            return []
        if isinstance(v, TensorV):
            return [v.tid]
        if isinstance(v, SeqV):
            out: List[int] = []
            for x in st.lists.get(v.lid, ()):
                out.extend(self.collect_params(x, st, depth + 1))
            return out
        if isinstance(v, DictV):
            for k, x in st.dicts.get(v.did, ()):
                if k == ("c", "params"):
                    return self.collect_params(x, st, depth + 1)
        return []

    def optimizer_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        attrs = st.attrs(obj.oid)
        tids = attrs["__params__"].value if isinstance(attrs.get("__params__"), ConstV) else ()
        opt_name = self.receiver_text(node) or "optimizer"
        span = self.span_of(node)
        if name == "step":
            closure = args[0] if args else kwargs.get("closure")
            if isinstance(closure, RefV) and closure.kind in ("func", "lambda", "method"):
                # LBFGS & co. run it (forward + backward) first; LBFGS then moves the parameters
                # and runs it again (a line search), and again
                q = attrs.get("__optim__")
                self.call(closure, [], {}, st, node)
                if isinstance(q, ConstV) and str(q.value).endswith("LBFGS"):
                    self.update_in_place(st, list(tids), f"{opt_name}.step()", span, opt_name)
                    self.call(closure, [], {}, st, node)
            self.check_polluted(obj, tids, opt_name, st, span)
            self.check_peer_pollution(tids, opt_name, st, span)
            fused = self.truth_of(attrs.get("__fused__", FALSE)) is True
            # zero_grad() (set_to_none) with no backward since: those parameters have no
            # .grad, and step() leaves them untouched.
            none = st.meta.get("none_grads", frozenset())
            tids = [t for t in tids if t not in none]
            self.update_in_place(st, tids, f"{opt_name}.step()", span, opt_name, "fused_step" if fused else "step")
            meta = st.own("meta")
            meta["steps"] = meta.get("steps", ()) + ((obj.oid, st.next_seq(), span),)
            return NONE
        if name == "zero_grad":
            grads = st.own("grads")
            for tid in tids:
                grads.pop(tid, None)
            to_none = kwargs.get("set_to_none", args[0] if args else TRUE)
            if self.truth_of(to_none) is not False:
                meta = st.own("meta")
                meta["none_grads"] = frozenset(meta.get("none_grads", frozenset())) | frozenset(tids)
            return NONE
        if name == "add_param_group" and args:
            more = self.collect_params(args[0], st)
            st.set_attr(obj.oid, "__params__", ConstV(tuple(tids) + tuple(more)))
            meta = st.own("meta")
            opts = dict(meta.get("optimizers", {}))
            opts[obj.oid] = tuple(tids) + tuple(more)
            meta["optimizers"] = opts
            return NONE
        return UNKNOWN

    def update_in_place(self, st: State, tids: Sequence[int], label: str, span: Span, owner: str,
                        kind: str = "step") -> None:
        """An optimizer-like update of parameters: in-place writes under no_grad (each bumps the
        version a graph that saved the parameter checks)."""
        saved_mode = st.grad_enabled
        st.grad_enabled = False
        try:
            for tid in tids:
                if tid in st.t:
                    self.do_write(st, tensor_value(tid), label, span, kind=kind, optimizer=owner, name=st.t[tid].name)
        finally:
            st.grad_enabled = saved_mode

    def check_polluted(self, obj: ObjV, tids: Sequence[int], opt_name: str, st: State, span: Span) -> None:
        """GW503: this step uses gradients that an earlier backward, meant for another optimizer,
        accumulated into our parameters (a missing detach, no zero_grad in between)."""
        opts: Dict[int, Tuple[int, ...]] = st.meta.get("optimizers", {})
        steps = st.meta.get("steps", ())
        for tid in tids:
            recs = st.grads.get(tid, ())
            if len(recs) < 2:
                continue
            first_span, first_seq, first_roots = recs[0]
            last_leaves = set()
            for root in recs[-1][2]:
                last_leaves |= self.leaves_under(root)
            for other_oid, other_tids in opts.items():
                if other_oid == obj.oid:
                    continue
                if not last_leaves & set(other_tids):
                    continue  # our own loss does not go through the other model: shared trunk, not a GAN
                stepped = any(o == other_oid and seq > first_seq for o, seq, _ in steps)
                if not stepped:
                    continue
                merge = self.merge_node(first_roots, set(tids), set(other_tids))
                if merge is None:
                    continue
                where = merge.span
                self.emit(Event("polluted_grads", where, {
                    "params": "the parameters of `" + opt_name + "`", "name": "its input",
                    "backward_line": first_span.row, "opt": opt_name, "step_line": span.row},
                    related=(Related(first_span, "this backward accumulates into them", "backward"),
                             Related(span, f"`{opt_name}.step()` uses the polluted gradients", "step"))))
                return

    def check_peer_pollution(self, tids: Sequence[int], opt_name: str, st: State, span: Span) -> None:
        """GW507, reported when this step applies gradients that a loss sent into a peer model
        through a target it did not detach."""
        hits = st.meta.get("peer_hits", {})
        if not hits:
            return
        for tid in tids:
            for rec in st.grads.get(tid, ()):
                for ev in hits.get(rec[1], ()):
                    if tid in ev.facts.get("theirs", ()):
                        self.emit(Event(ev.kind, ev.span, dict(ev.facts, step=f"{opt_name}.step()", step_line=span.row),
                                        ev.related + (Related(span, "this step applies those gradients", "step"),)))
                        return

    def merge_node(self, roots: Sequence[Any], mine: set, theirs: set) -> Any:
        """The first node where a path from our parameters meets the other optimizer's parameters."""
        reach: Dict[int, Tuple[bool, bool]] = {}
        order = walk_nodes(roots)
        for n in sorted(order, key=lambda n: n.seq):
            a = any(t in mine for t in n.leaves) or any(reach.get(p.id, (False, False))[0] for p in n.inputs)
            b = any(t in theirs for t in n.leaves) or any(reach.get(p.id, (False, False))[1] for p in n.inputs)
            reach[n.id] = (a, b)
        best = None
        for n in order:
            a, b = reach[n.id]
            if a and b and any(reach.get(p.id, (False, False)) == (True, False) for p in n.inputs):
                if best is None or n.seq < best.seq:
                    best = n
        return best

    # ================================================================== distributions
    def construct_distribution(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        st.set_attr(obj.oid, "__dist__", ConstV(qual))
        span = self.span_of(node)
        derived: List[Value] = []
        for v in list(args) + list(kwargs.values()):
            if isinstance(v, TensorV):
                # Distributions turn their parameters into cached tensors (logits <-> probs,
                # scale_tril ...) when built or first used: that node saves the parameter.
                d = self.apply_op(st, _SAVES_ALL, [v], span, qual.rsplit(".", 1)[-1])[0]
                derived.append(d)
        st.set_attr(obj.oid, "__params__", self.new_seq(derived, st))
        return obj

    def distribution_method(self, obj: ObjV, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        params = st.attrs(obj.oid).get("__params__")
        ps = list(st.lists.get(params.lid, ())) if isinstance(params, SeqV) else []
        span = self.span_of(node)
        if name in ("sample", "sample_n", "enumerate_support"):
            return self.new_tensor(st, rg=False, node=node)
        slots = ps + [a for a in args if isinstance(a, TensorV)]
        if not slots:
            return UNKNOWN
        return self.apply_op(st, _SAVES_ALL, slots, span, name)[0]

    # ================================================================== custom autograd.Function
    def custom_function_view(self, st: State, out: TensorV, fn: str, span: Span) -> None:
        """The output of ``fn.apply`` that is one of its inputs returned as-is while nothing
        required grad (the gradient-flow checks remember it)."""

    def output_marked_nondiff(self, st: State, out: TensorV, where: Span) -> None:
        """A custom Function's output that ``ctx.mark_non_differentiable`` cut from the graph
        (the gradient-flow facts note where)."""

    def apply_custom_function(self, info: Any, args: List[Value], kwargs: Dict[str, Value], st: State,
                              span: Span) -> Value:
        self.applied_functions.add(info.name)
        found = info.find_method("forward")
        if not found:
            return UNKNOWN
        ctx = ObjV(fresh_id())
        st.set_attr(ctx.oid, "__ctx__", TRUE)
        st.set_attr(ctx.oid, "__saved__", ConstV(()))
        st.set_attr(ctx.oid, "__dirty__", ConstV(()))
        # which forward inputs are not tensors (autograd raises if backward returns a tensor
        # for one): positional arguments only, as apply takes them
        st.set_attr(ctx.oid, "__non_tensor_inputs__",
                    ConstV(tuple(i for i, a in enumerate(args) if isinstance(a, ConstV))))
        outer_mode = st.grad_enabled
        st.grad_enabled = False
        try:
            ret = self.call_function(found[1], [ctx] + args, kwargs, st, span)
        finally:
            st.grad_enabled = outer_mode
        inputs = [a for a in args if isinstance(a, TensorV)]
        in_rg = [st.t[a.tid].rg for a in inputs]
        rg = True if any(r is True for r in in_rg) else (None if any(r is None for r in in_rg) else False)
        if not outer_mode or rg is False:
            if rg is False and isinstance(ret, TensorV) and ret.tid in {a.tid for a in inputs} and \
                    ret.tid not in set(st.attrs(ctx.oid)["__dirty__"].value):
                # an input returned as-is is still a view of it, made without grad tracking
                alias = self.alias_tensor(st, ret, kind="view", span=span, rg=False, grad_fn=None)
                self.custom_function_view(st, alias, info.name, span)
                return alias
            return ret
        saved_recs = st.attrs(ctx.oid)["__saved__"].value
        stash_seq = st.next_seq()
        stashed = tuple(replace(self.saved_rec(st, v, stash_seq), unchecked=True)
                        for k, v in st.attrs(ctx.oid).items()
                        if isinstance(v, TensorV) and not k.startswith("__"))
        saved_recs = tuple(saved_recs) + stashed
        outputs = [ret] if isinstance(ret, TensorV) else (
            [x for x in st.lists.get(ret.lid, ()) if isinstance(x, TensorV)] if isinstance(ret, SeqV) else [])
        # tensors backward reads that are neither inputs nor outputs of forward: a double
        # backward (create_graph=True) treats them as constants
        sites = st.attrs(ctx.oid).get("__kept_at__")
        ends = {st.t[x.tid].counter for x in inputs + outputs if x.tid in st.t}
        middles = tuple(sp for tid, sp in (sites.value if isinstance(sites, ConstV) else ())
                        if tid in st.t and st.t[tid].counter not in ends and st.t[tid].dtype not in ("bool", "int"))
        node = self.make_node(st, f"{info.name}Backward", span, inputs, saved_recs, st.next_seq(),
                              custom=(info, ctx, len(outputs)))
        if middles:
            self.custom_middles[node.id] = (info.name, middles[0])
        dirty = set(st.attrs(ctx.oid)["__dirty__"].value)
        nondiff_v = st.attrs(ctx.oid).get("__nondiff__")
        nondiff = set(nondiff_v.value) if isinstance(nondiff_v, ConstV) else set()
        input_tids = {a.tid for a in inputs}
        input_counters = {st.t[a.tid].counter for a in inputs}
        new_outputs: List[Value] = []
        for out in outputs:
            if out.tid in nondiff:
                # ctx.mark_non_differentiable: no gradient flows back through this output
                where = st.attrs(ctx.oid).get("__nondiff_at__")
                at = where.value if isinstance(where, ConstV) else span
                st.update_t(out.tid, rg=False, grad_fn=None, leaf=True, created=at)
                self.output_marked_nondiff(st, out, at)
                new_outputs.append(out)
                continue
            if out.tid not in input_tids and out.tid not in dirty and st.t[out.tid].counter in input_counters:
                # a view of an input (x.view(...)) made inside forward: autograd forbids writing it
                st.update_t(out.tid, grad_fn=node, rg=rg, leaf=False, custom_out=(info.name, span))
                new_outputs.append(out)
                continue
            if out.tid in input_tids and out.tid not in dirty:
                alias = self.alias_tensor(st, out, kind="view", span=span, rg=rg, grad_fn=node)
                st.update_t(alias.tid, custom_out=(info.name, span))
                new_outputs.append(alias)
            else:
                st.update_t(out.tid, grad_fn=node, rg=rg, leaf=False)
                new_outputs.append(out)
        if isinstance(ret, TensorV):
            return new_outputs[0] if new_outputs else ret
        if isinstance(ret, SeqV):
            items = list(st.lists.get(ret.lid, ()))
            it = iter(new_outputs)
            items = [next(it) if isinstance(x, TensorV) else x for x in items]
            return self.new_seq(items, st, kind=ret.kind)
        return ret

    def note_kept(self, ctx: ObjV, tensors: Sequence[TensorV], span: Span, st: State) -> None:
        """Where forward kept tensors for backward (save_for_backward, a ctx attribute)."""
        kept = st.attrs(ctx.oid).get("__kept_at__")
        prev = kept.value if isinstance(kept, ConstV) else ()
        st.set_attr(ctx.oid, "__kept_at__", ConstV(prev + tuple((t.tid, span) for t in tensors)))

    def ctx_method(self, ctx: ObjV, name: str, args: List[Value], st: State, node: ast.AST) -> Value:
        if name in ("save_for_backward", "save_for_forward"):
            seq = st.next_seq()
            recs = []
            for a in args:
                for t in self.slot_tensors(st, a):
                    recs.append(self.saved_rec(st, t, seq))
            st.set_attr(ctx.oid, "__saved__", ConstV(tuple(recs)))
            if name == "save_for_backward":
                self.note_kept(ctx, [t for a in args for t in self.slot_tensors(st, a)], self.span_of(node), st)
            return NONE
        if name == "mark_non_differentiable":
            tids = tuple(t.tid for a in args for t in self.slot_tensors(st, a))
            prev = st.attrs(ctx.oid).get("__nondiff__")
            st.set_attr(ctx.oid, "__nondiff__", ConstV((prev.value if isinstance(prev, ConstV) else ()) + tids))
            st.set_attr(ctx.oid, "__nondiff_at__", ConstV(self.span_of(node)))
            return NONE
        if name == "mark_dirty":
            tids = tuple(a.tid for a in args if isinstance(a, TensorV))
            st.set_attr(ctx.oid, "__dirty__", ConstV(st.attrs(ctx.oid)["__dirty__"].value + tids))
            return NONE
        return NONE

    def ctx_saved_tensors(self, ctx: ObjV, st: State) -> Value:
        recs = st.attrs(ctx.oid).get("__saved__")
        items: List[Value] = []
        for r in (recs.value if isinstance(recs, ConstV) else ()):
            if r.tid not in st.t:
                items.append(UNKNOWN)
                continue
            alias = self.alias_tensor(st, tensor_value(r.tid), kind="detach", span=None, rg=False, grad_fn=None)
            st.update_t(alias.tid, ctx_saved=True)
            items.append(alias)
        return self.new_seq(items, st, kind="tuple")

    # ================================================================== builtins & containers
    def call_builtin(self, name: str, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Value:
        if name == "isinstance" and len(args) == 2:
            return self.builtin_isinstance(args[0], args[1], st)
        if name == "range":
            vals = [a.value for a in args if isinstance(a, ConstV)]
            if len(vals) == len(args) and all(isinstance(v, int) for v in vals):
                r = range(*vals)
                if len(r) <= 8:
                    return self.new_seq([ConstV(i) for i in r], st)
            return self.new_seq([UNKNOWN], st, kind="homogeneous")
        if name in ("list", "tuple", "sorted", "reversed", "set", "iter"):
            if not args:
                return self.new_seq([], st)
            src = args[0]
            if isinstance(src, SeqV):
                items = list(st.lists.get(src.lid, ()))
                if name == "reversed":
                    items.reverse()
                return self.new_seq(items, st, kind="homogeneous" if src.kind == "homogeneous" else
                                    ("tuple" if name == "tuple" else "list"))
            if isinstance(src, DictV):
                return self.new_seq([ConstV(k[1]) if k[0] == "c" else UNKNOWN for k, _ in st.dicts.get(src.did, ())], st)
            if isinstance(src, ObjV):
                children = st.attrs(src.oid).get("__children__")
                if isinstance(children, SeqV):
                    return children
            return src if isinstance(src, TensorV) else UNKNOWN
        if name in ("random.sample", "random.choices", "random.choice") and args and isinstance(args[0], SeqV):
            # sampling a replay memory: any stored item may come back, the oldest included
            items = list(st.lists.get(args[0].lid, ()))
            if name == "random.choice":
                return items[0] if items else UNKNOWN
            return self.new_seq(items[:16], st, kind="homogeneous") if items else self.new_seq([], st)
        if name == "random.shuffle":
            return NONE
        if name == "next" and args:
            src = args[0]
            if isinstance(src, SeqV):
                items = st.lists.get(src.lid, ())
                return items[0] if items else UNKNOWN
            return UNKNOWN
        if name == "enumerate" and args:
            items = self.known_items(args[0], st)
            if items is not None:
                return self.new_seq([self.new_seq([ConstV(i), x], st, kind="tuple") for i, x in enumerate(items)], st)
            return self.new_seq([self.new_seq([UNKNOWN, self.element_of(args[0], st)], st, kind="tuple")], st,
                                kind="homogeneous")
        if name == "zip" and args:
            lists = [self.known_items(a, st) for a in args]
            if all(x is not None for x in lists):
                n = min(len(x) for x in lists)  # type: ignore[arg-type]
                return self.new_seq([self.new_seq([x[i] for x in lists], st, kind="tuple") for i in range(n)], st)
            known = [x for x in lists if x is not None]
            if known and len(min(known, key=len)) <= MAX_ZIP_KNOWN:
                # zip(weights, self.ops): the known side decides the length; the others give
                # their representative element at every position
                n = min(len(x) for x in known)
                reps = [self.element_of(a, st) if x is None else None for a, x in zip(args, lists)]
                return self.new_seq([self.new_seq([x[i] if x is not None else rep for x, rep in zip(lists, reps)],
                                                  st, kind="tuple") for i in range(n)], st)
            return self.new_seq([self.new_seq([self.element_of(a, st) for a in args], st, kind="tuple")], st,
                                kind="homogeneous")
        if name == "sum" and args:
            items = self.known_items(args[0], st)
            tensors = [x for x in (items or [self.element_of(args[0], st)]) if isinstance(x, TensorV)]
            if tensors:
                return self.apply_op(st, None, tensors, self.span_of(node), "sum")[0]
            return UNKNOWN
        if name in ("len", "abs", "min", "max", "float", "int", "round", "bool", "str"):
            vals = [a for a in args if isinstance(a, ConstV)]
            if len(vals) == len(args) and args and not kwargs:
                try:
                    return ConstV(__builtins__[name](*[v.value for v in vals]) if isinstance(__builtins__, dict)
                                  else getattr(__builtins__, name)(*[v.value for v in vals]))
                except Exception:
                    return UNKNOWN
            if name == "len" and args and isinstance(args[0], SeqV) and args[0].kind != "homogeneous":
                return ConstV(len(st.lists.get(args[0].lid, ())))
            return UNKNOWN
        if name == "getattr" and len(args) >= 2 and isinstance(args[1], ConstV) and isinstance(args[1].value, str):
            v = self.load_attr(args[0], args[1].value, st, node)
            if isinstance(v, UnknownV) and len(args) > 2:
                return args[2]
            return v
        if name == "setattr" and len(args) == 3 and isinstance(args[1], ConstV) and isinstance(args[1].value, str):
            if isinstance(args[0], ObjV):
                self.module_setattr(args[0], args[1].value, args[2], st)
            return NONE
        if name == "super":
            return self.super_proxy(args, st)
        if name in ("copy.deepcopy", "copy.copy") and args:
            return self.deepcopy(args[0], st, {})
        if name == "dict":
            d = DictV(fresh_id())
            entries = []
            pairs = self.known_items(args[0], st) if args and isinstance(args[0], SeqV) else None
            for pair in pairs or ():
                kv = self.known_items(pair, st) if isinstance(pair, SeqV) else None
                if kv and len(kv) == 2:
                    entries.append((self.dict_key(kv[0]), kv[1]))
            if args and isinstance(args[0], DictV):
                entries.extend(st.dicts.get(args[0].did, ()))
            entries.extend((("c", k), v) for k, v in kwargs.items())
            st.own("dicts")[d.did] = tuple(entries)
            return d
        if name == "print":
            return NONE
        return UNKNOWN

    def builtin_isinstance(self, v: Value, typ: Value, st: State) -> Value:
        types = self.known_items(typ, st) if isinstance(typ, SeqV) else [typ]
        if types is None:
            return UNKNOWN
        result: Optional[bool] = False
        for t in types:
            r = self._isinstance1(v, t, st)
            if r is True:
                return TRUE
            if r is None:
                result = None
        return UNKNOWN if result is None else FALSE

    def _isinstance1(self, v: Value, t: Value, st: State) -> Optional[bool]:
        if isinstance(t, RefV) and t.kind == "torch":
            if t.name in ("torch.Tensor", "torch.nn.Parameter"):
                if isinstance(v, TensorV):
                    return True if t.name == "torch.Tensor" else st.t[v.tid].param
                if isinstance(v, (SeqV, DictV, ConstV)):
                    return False
                if isinstance(v, ObjV):
                    return False
                return None
            if isinstance(v, ObjV):
                q = st.attrs(v.oid).get("__torch__")
                if isinstance(q, ConstV):
                    return q.value == t.name or (t.name == "torch.nn.Module")
                if t.name == "torch.nn.Module":
                    return "__module__" in st.attrs(v.oid)
                cls = st.attrs(v.oid).get("__class__")
                if isinstance(cls, RefV) and cls.kind == "class":
                    return cls.target.torch_base == t.name or False
                return None
            if isinstance(v, (TensorV, SeqV, DictV, ConstV)):
                return False
            return None
        if isinstance(t, RefV) and t.kind == "class" and isinstance(v, ObjV):
            cls = st.attrs(v.oid).get("__class__")
            if isinstance(cls, RefV) and cls.kind == "class":
                return cls.target.is_subclass_of(t.target)
            return False
        if isinstance(t, RefV) and t.kind == "builtin":
            py = {"tuple": (SeqV,), "list": (SeqV,), "dict": (DictV,)}.get(t.name)
            if py is not None:
                if isinstance(v, SeqV):
                    return (t.name == "tuple") == (v.kind == "tuple") if t.name in ("tuple", "list") else False
                if isinstance(v, (TensorV, ObjV)):
                    return False
            if t.name in ("int", "float", "bool", "str") and isinstance(v, ConstV):
                return type(v.value).__name__ == t.name
            if isinstance(v, TensorV):
                return False
        return None

    def construct_swa(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                      node: ast.AST) -> Value:
        """``AveragedModel(model)``: a deep copy of the model (its parameters are new leaves that
        require grad, so a forward through it records a graph that saves them) whose
        ``update_parameters(model)`` rewrites them in place. SWALR and the helpers: opaque."""
        if qual.rsplit(".", 1)[-1] != "AveragedModel":
            return UNKNOWN
        model = args[0] if args else kwargs.get("model", UNKNOWN)
        if not isinstance(model, ObjV):
            return UNKNOWN
        obj = ObjV(fresh_id())
        copy = self.deepcopy(model, st, {})
        for k, v in (("module", copy), ("__averaged__", TRUE), ("__module__", TRUE), ("training", TRUE),
                     ("__span__", ConstV(self.span_of(node)))):
            st.set_attr(obj.oid, k, v)
        for _, t in self.module_params(copy, st):
            st.update_t(t.tid, name=(st.t[t.tid].name or "parameter") + " (averaged copy)")
        return obj

    def embedding_renorm(self, st: State, weight: Optional[Value], max_norm: Optional[Value], span: Span,
                         site: Optional[Span]) -> None:
        """An embedding lookup with ``max_norm`` renormalises the looked-up rows of ``weight``
        in place (``embedding_renorm_``, under no_grad): a graph that saved the weight (a tied
        output projection ``h @ emb.weight.t()``) finds it modified."""
        if not isinstance(weight, TensorV) or weight.tid not in st.t:
            return
        if not isinstance(max_norm, ConstV) or max_norm.value is None or max_norm.value is False:
            return
        saved_mode = st.grad_enabled
        st.grad_enabled = False
        try:
            self.do_write(st, weight, "renorm of an embedding lookup with max_norm",
                          span, kind="module", site=site, name=st.t[weight.tid].name or "weight",
                          leaf_check=False)
        finally:
            st.grad_enabled = saved_mode

    # ================================================================== super()
    def super_proxy(self, args: List[Value], st: State) -> Value:
        """``super()`` / ``super(Cls, self)`` inside a method: a proxy that looks attributes up
        after the defining class (its user-defined parents, then the torch base class)."""
        if len(args) == 2 and isinstance(args[0], RefV) and args[0].kind == "class":
            return ref_value("super", args[0].name, args[0].target, args[1])
        fdef = self.call_stack[-1] if self.call_stack else None
        if fdef is None:
            return UNKNOWN
        owner = self.class_of_method(fdef)
        params = list(fdef.args.posonlyargs) + list(fdef.args.args)
        if owner is None or not params:
            return UNKNOWN
        return ref_value("super", owner.name, owner, st.lookup(params[0].arg))

    def super_attr(self, proxy: RefV, attr: str) -> Value:
        owner, self_v = proxy.target, proxy.bound
        for parent in owner.parents:
            found = parent.find_method(attr)
            if found:
                return ref_value("method", attr, found, self_v)
        base = owner.torch_base
        concrete = base.startswith("torch.nn.") and base.rsplit(".", 1)[-1] not in ("Module", "ModuleList", "ModuleDict")
        if concrete and isinstance(self_v, ObjV) and attr in ("__init__", "forward"):
            return ref_value("builtin", f"super-torch.{attr}", base, self_v)
        if base.startswith("torch.optim.") and isinstance(self_v, ObjV) and attr in ("__init__", "step", "zero_grad"):
            # a user optimizer (SAM, Lookahead ...): Optimizer.__init__ builds param_groups and
            # state; a concrete base's step() updates the parameters in place
            return ref_value("builtin", f"super-torch.{attr}", base, self_v)
        return ref_value("builtin", "super-noop")

    def call_super_torch(self, ref: RefV, args: List[Value], kwargs: Dict[str, Value], st: State,
                         node: ast.AST) -> Value:
        """``super().__init__(...)`` of a subclass of a torch module (``class LoRA(nn.Linear)``):
        build that module and give its parameters and settings to ``self``; ``super().forward``
        runs the torch module's forward on them."""
        self_v = ref.bound
        if not isinstance(self_v, ObjV):
            return UNKNOWN
        if ref.target.startswith("torch.optim."):
            if ref.name.endswith("__init__"):
                built = self.construct_optimizer(ref.target, args, kwargs, st, node)
                for k, v in st.attrs(built.oid).items():
                    st.set_attr(self_v.oid, k, v)
                meta = st.own("meta")
                opts = dict(meta.get("optimizers", {}))
                opts[self_v.oid] = opts.pop(built.oid, ())
                meta["optimizers"] = opts
                return NONE
            if ref.target.rsplit(".", 1)[-1] == "Optimizer" and ref.name.endswith("step"):
                return NONE  # abstract: the subclass's own step does the work
            return self.optimizer_method(self_v, ref.name.rsplit(".", 1)[-1], args, kwargs, st, node)
        if ref.name.endswith("__init__"):
            self.adopt_torch_module(self_v, ref.target, args, kwargs, st, node)
            return NONE
        return self.call_torch_module(self_v, ref.target, args, kwargs, st, node, None)

    def adopt_torch_module(self, self_v: ObjV, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                           node: ast.AST) -> None:
        """Give ``self_v`` the parameters and settings the torch module ``qual`` would build
        from these arguments (its ``__init__`` ran on ``self``)."""
        built = self.construct_torch_module(qual, args, kwargs, st, node)
        if isinstance(built, ObjV):
            for k, v in st.attrs(built.oid).items():
                if k not in ("__span__", "training", "__module__"):
                    st.set_attr(self_v.oid, k, v)
                    if isinstance(v, TensorV) and st.t[v.tid].param:
                        st.update_t(v.tid, name=f"self.{k}")

    def deepcopy(self, v: Value, st: State, memo: Dict[int, Value]) -> Value:
        if isinstance(v, TensorV):
            info = st.t[v.tid]
            out = self.new_tensor(st, rg=info.rg if info.leaf else False, param=info.param, name=info.name)
            return out
        if isinstance(v, ObjV):
            if v.oid in memo:
                return memo[v.oid]
            new = ObjV(fresh_id())
            memo[v.oid] = new
            for k, x in st.attrs(v.oid).items():
                st.set_attr(new.oid, k, self.deepcopy(x, st, memo))
            return new
        if isinstance(v, SeqV):
            return self.new_seq([self.deepcopy(x, st, memo) for x in st.lists.get(v.lid, ())], st, kind=v.kind)
        return v

    def call_seq_method(self, seq: Value, name: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                        node: ast.AST) -> Value:
        if isinstance(seq, SeqV):
            items = list(st.lists.get(seq.lid, ()))
            if name in ("append", "extend", "insert") and args:
                self.note_store(args[-1], st, node, held=True)
            if name == "append" and args:
                items.append(args[0])
            elif name == "extend" and args:
                more = self.known_items(args[0], st)
                items.extend(more if more is not None else [self.element_of(args[0], st)])
            elif name == "insert" and len(args) == 2:
                items.insert(0, args[1])
            elif name == "pop":
                if not items:
                    return UNKNOWN
                v = items.pop()
                st.own("lists")[seq.lid] = tuple(items)
                return v
            elif name in ("copy",):
                return self.new_seq(items, st, kind=seq.kind)
            elif name in ("clear",):
                items = []
            else:
                return UNKNOWN
            if len(items) > 16:
                items = items[:1] + items[-15:]
            st.own("lists")[seq.lid] = tuple(items)
            return NONE
        if isinstance(seq, DictV):
            entries = st.dicts.get(seq.did, ())
            if name == "get" and args:
                v = self.dict_get(seq, args[0], st)
                if isinstance(v, UnknownV) and not any(k == self.dict_key(args[0]) for k, _ in entries):
                    return args[1] if len(args) > 1 else NONE
                return v
            if name == "setdefault" and args:
                key = self.dict_key(args[0])
                for k, v in entries:
                    if k == key and key[0] == "c":
                        return v
                default = args[1] if len(args) > 1 else NONE
                self.dict_set(seq, args[0], default, st)
                return default
            if name == "values":
                return self.new_seq([v for _, v in entries], st)
            if name == "keys":
                return self.new_seq([ConstV(k[1]) if k[0] == "c" else UNKNOWN for k, _ in entries], st)
            if name == "items":
                return self.new_seq([self.new_seq([ConstV(k[1]) if k[0] == "c" else UNKNOWN, v], st, kind="tuple")
                                     for k, v in entries], st)
            if name == "update" and args and isinstance(args[0], DictV):
                for k, v in st.dicts.get(args[0].did, ()):
                    self.dict_set(seq, ConstV(k[1]) if k[0] == "c" else UNKNOWN, v, st)
                return NONE
            if name == "pop" and args:
                return self.dict_get(seq, args[0], st)
        return UNKNOWN


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
_OPSYM = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**", ast.FloorDiv: "//", ast.Mod: "%",
          ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@"}
