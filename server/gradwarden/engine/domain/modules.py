"""``nn.Module`` objects: torch modules built from the op table (their parameters and settings),
containers (``Sequential``, ``ModuleList``, ``ModuleDict`` ...), calls of a module (its forward,
in-place modules, renormalising embeddings), module methods (``parameters()``, ``train()``,
``requires_grad_()`` ...), ``super()`` into a torch base class, and objects' attributes and items.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.diagnostic import Span
from gradwarden.engine.domain.builtins import make_oneshot
from gradwarden.engine.domain.containers import replace_named_child, store_into_container
from gradwarden.engine.domain import optable
from gradwarden.engine.front.callsites import GRAD_OFF_CONTEXTS
from gradwarden.engine.state.model import (
    ConstV, DictV, FALSE, NONE, ObjV, RefV, SeqV, State, TRUE, TensorV, UNKNOWN, UnknownV, Value, fresh_id,
    ref_value,
)


REGRESSION_LOSS_MODULES = {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss"}

SOFT_TARGET_LOSS_MODULES = {"KLDivLoss", "CrossEntropyLoss", "BCELoss", "BCEWithLogitsLoss"}
PARAM_SLOT = re.compile(r"^(weight|bias|in_proj_weight|in_proj_bias|q_proj_weight|k_proj_weight|v_proj_weight|"
                        r"bias_k|bias_v|out_proj\.weight|out_proj\.bias|weight_ih.*|weight_hh.*|bias_ih.*|"
                        r"bias_hh.*|weight_hr.*|running_mean|running_var|num_batches_tracked)$")


# what every nn.Module answers (dir(nn.Module()) on torch 2.13, without dunders)
MODULE_API = frozenset((
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile",
    "cpu", "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer",
    "get_extra_state", "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia",
    "named_buffers", "named_children", "named_modules", "named_parameters", "parameters",
    "register_backward_hook", "register_buffer", "register_forward_hook", "register_forward_pre_hook",
    "register_full_backward_hook", "register_full_backward_pre_hook", "register_load_state_dict_post_hook",
    "register_load_state_dict_pre_hook", "register_module", "register_parameter",
    "register_state_dict_post_hook", "register_state_dict_pre_hook", "requires_grad_", "set_extra_state",
    "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train", "training", "type", "xpu",
    "zero_grad"))
# calls and names through which a class may hold attributes its code does not name
_OPEN_NAMES = frozenset(("setattr", "__dict__", "__getattr__", "__getattribute__", "add_module", "register_module",
                         "register_buffer", "register_parameter", "__setattr__", "vars", "__slots__"))


def _closed_class(cls: Any, attr: str, depth: int) -> bool:
    """Every attribute an instance of ``cls`` can hold is named in the code of ``cls`` and its bases,
    the bases being the user's classes and ``nn.Module`` only."""
    if depth > 8 or cls.class_attrs.get(attr) is not None or attr in cls.methods:
        return False
    for b in cls.bases:
        if isinstance(b, RefV) and b.kind == "class":
            if not _closed_class(b.target, attr, depth + 1):
                return False
        elif not (isinstance(b, RefV) and b.kind == "torch" and b.name in ("torch.nn.Module", "nn.Module")):
            return False
    for n in ast.walk(cls.node):
        name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else \
            n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) else None
        if name in _OPEN_NAMES or name == attr:
            return False
    return True


class Modules:
    """The ``modules`` role: nn modules and the objects that hold them."""

    def __init__(self, it: Any) -> None:
        self.it = it

    # ================================================================== modules
    def is_module_obj(self, v: Value, st: State) -> bool:
        return isinstance(v, ObjV) and "__module__" in st.attrs(v.oid)

    def surely_lacks(self, obj: Value, attr: str, st: State) -> bool:
        """``getattr(model, "backbone", model)`` on an instance of the user's module class that holds
        no such attribute: its class and every base are the user's own (down to ``nn.Module``), none
        sets attributes by computed names or answers ``__getattr__``, and ``attr`` is not one of
        ``nn.Module``'s own. Then Python returns the default."""
        if not isinstance(obj, ObjV) or attr.startswith("__") or attr in MODULE_API:
            return False
        attrs = st.attrs(obj.oid)
        if "__module__" not in attrs or attr in attrs:
            return False
        cls = attrs.get("__class__")
        return isinstance(cls, RefV) and cls.kind == "class" and _closed_class(cls.target, attr, 0)

    def construct_container(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                            node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        for k, v in (("__torch__", ConstV(qual)), ("__module__", TRUE), ("training", TRUE),
                     ("__span__", ConstV(self.it.span_of(node)))):
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
        st.set_attr(obj.oid, "__children__", self.it.ev.new_seq(children, st, kind=kind))
        st.set_attr(obj.oid, "__keys__", self.it.ev.new_seq(keys, st))
        return obj

    def construct_torch_module(self, qual: str, args: List[Value], kwargs: Dict[str, Value], st: State,
                               node: ast.AST) -> Value:
        obj = ObjV(fresh_id())
        span = self.it.span_of(node)
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
            no_bias = self.it.ev.truth_of(kwargs.get("bias", TRUE)) is False
            no_affine = self.it.ev.truth_of(kwargs.get("affine", kwargs.get("elementwise_affine", TRUE))) is False
            no_stats = self.it.ev.truth_of(kwargs.get("track_running_stats", TRUE)) is False
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
                    t = self.it.graph.new_tensor(st, rg=False, node=node, name=slot)
                else:
                    t = self.it.graph.new_tensor(st, rg=True, node=node, name=slot, param=True)
                st.set_attr(obj.oid, slot, t)
        return obj

    def module_params(self, obj: ObjV, st: State, prefix: str = "", seen: Optional[set] = None,
                      buffers: bool = False, plain_lists: bool = False) -> List[Tuple[str, TensorV]]:
        """What ``parameters()`` yields (``buffers``: and the buffers). Modules kept in a plain Python
        list attribute (``self.blocks = [nn.Linear(...), ...]``) are not registered by torch: only
        with ``plain_lists`` (what the forward can reach)."""
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
                out.extend(self.module_params(v, st, prefix + k + ".", seen, buffers, plain_lists))
            elif k == "__children__" and isinstance(v, SeqV):
                keys = st.lists.get(st.attrs(obj.oid).get("__keys__", SeqV(-1)).lid, ()) \
                    if isinstance(st.attrs(obj.oid).get("__keys__"), SeqV) else ()
                for i, child in enumerate(st.lists.get(v.lid, ())):
                    key = keys[i].value if i < len(keys) and isinstance(keys[i], ConstV) else str(i)
                    if isinstance(child, ObjV):
                        out.extend(self.module_params(child, st, f"{prefix}{key}.", seen, buffers, plain_lists))
                    elif isinstance(child, TensorV):
                        out.append((f"{prefix}{key}", child))
            elif plain_lists and isinstance(v, SeqV) and k != "__keys__":
                for i, child in enumerate(st.lists.get(v.lid, ())):
                    if isinstance(child, ObjV) and self.is_module_obj(child, st):
                        out.extend(self.module_params(child, st, f"{prefix}{k}.{i}.", seen, buffers, plain_lists))
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
        if replace_named_child(self.it, obj, attr, value, st):
            return  # `setattr(seq, "0", block)`: the container's child of that name, not a new attribute
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
                ret = self._run_hook(fn, [obj, self.it.ev.new_seq(list(args), st, kind="tuple")], st, node, obj, "pre")
                if isinstance(ret, SeqV) and ret.kind == "tuple":
                    args = list(st.lists.get(ret.lid, ()))
                elif not isinstance(ret, (ConstV, UnknownV)):
                    args = [ret]
        out = self._call_object(obj, args, kwargs, st, node, site)
        for kind, fn in hooks.value:
            if kind == "forward":
                ret = self._run_hook(fn, [obj, self.it.ev.new_seq(list(args), st, kind="tuple"), out], st, node, obj,
                                     "forward")
                if not isinstance(ret, (ConstV, UnknownV)):
                    out = ret
        return out

    def _run_hook(self, fn: Value, args: List[Value], st: State, node: ast.AST, obj: ObjV, kind: str) -> Value:
        """Call a forward (pre-)hook with the hook context set: what it keeps (the output, or the
        inputs a pre-hook sees) is told apart by the gradient-flow checks (engine/checks/reach.py,
        engine/checks/hookslots.py)."""
        outer = (getattr(self.it, "hook_module", None), getattr(self.it, "hook_call", None),
                 getattr(self.it, "hook_module_text", ""), getattr(self.it, "hook_kind", ""))
        self.it.hook_depth = getattr(self.it, "hook_depth", 0) + 1
        self.it.hook_module, self.it.hook_call, self.it.hook_kind = obj.oid, node, kind
        self.it.hook_module_text = self.it.text_of(node.func) if isinstance(node, ast.Call) else ""
        try:
            return self.it.ev.call(fn, args, {}, st, node)
        finally:
            self.it.hook_depth -= 1
            self.it.hook_module, self.it.hook_call, self.it.hook_module_text, self.it.hook_kind = outer

    def _call_object(self, obj: ObjV, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST,
                     site: Optional[Span] = None) -> Value:
        attrs = st.attrs(obj.oid)
        cls = attrs.get("__class__")
        if "__averaged__" in attrs and isinstance(attrs.get("module"), ObjV):
            if st.grad_enabled and obj.oid not in st.meta.get("averaged_calls", {}):
                meta = st.own("meta")  # the first forward through the copy with grad on (checks/averaged.py)
                meta["averaged_calls"] = {**meta.get("averaged_calls", {}), obj.oid: self.it.span_of(node)}
            return self.call_object(attrs["module"], args, kwargs, st, node, site)
        if "__opaque__" in attrs:
            tensors = [a for a in args if isinstance(a, TensorV)]
            return self.it.graph.apply_op(st, None, tensors, self.it.span_of(node), "forward")[0] if tensors else UNKNOWN
        if isinstance(cls, RefV) and cls.kind == "class":
            found = cls.target.find_method("forward") if cls.target.is_module else cls.target.find_method("__call__")
            if found:
                return self.it.calls.call_function(found[1], [obj] + args, kwargs, st, self.it.span_of(node), bound_self=True)
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
        span = self.it.span_of(node)
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
        training = self.it.ev.truth_of(attrs.get("training", TRUE)) is not False
        inplace = self.it.ev.truth_of(attrs.get("inplace", FALSE)) is True
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
            self.it.writes.do_write(st, x, label, span, kind="module", site=site, name=self.it.text_of(node.args[0])
                                    if isinstance(node, ast.Call) and node.args and site is None else "",
                                    fix_facts={"module_span": attrs["__span__"].value if isinstance(attrs.get("__span__"), ConstV) else None,
                                     "form": "module_inplace", "op": label})
            self.it.writes.inplace_autograd(st, x, info, [], span, short, report_span=report, call_span=span)
            return x
        if info is None:
            tensors = [a for a in args if isinstance(a, TensorV)]
            params = [v for k, v in attrs.items() if isinstance(v, TensorV) and st.t[v.tid].param]
            force = True if params and st.grad_enabled else None
            outs = self.it.graph.apply_op(st, None, tensors + params, span, short, report_span=report, force_rg=force)
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
            self.it.tensors.check_target_detached(args[0], args[1], st, span)
        outs = self.it.graph.apply_op(st, info, slots, span, short, report_span=report, call_span=span if site else None)
        if short == "Linear" and outs:
            self.it.writes.saves_a_view_of(outs[0], attrs.get("weight"), st)
        if short in SOFT_TARGET_LOSS_MODULES and len(args) >= 2 and outs and st.t[outs[0].tid].grad_fn is not None:
            self.it.tensors.check_peer_target(args[0], args[1], st, span, st.t[outs[0].tid].grad_fn)
        if short in ("LSTM",):
            hc = self.it.ev.new_seq(outs[1:3] if len(outs) >= 3 else [outs[0], outs[0]], st, kind="tuple")
            return self.it.ev.new_seq([outs[0], hc], st, kind="tuple")
        if short in ("GRU", "RNN"):
            return self.it.ev.new_seq([outs[0], outs[1] if len(outs) > 1 else outs[0]], st, kind="tuple")
        if short == "LSTMCell":
            return self.it.ev.new_seq([outs[0], outs[1] if len(outs) > 1 else outs[0]], st, kind="tuple")
        if short == "MultiheadAttention":
            return self.it.ev.new_seq([outs[0], outs[1] if len(outs) > 1 else self.it.graph.new_tensor(st, rg=False)], st,
                                      kind="tuple")
        if len(outs) == 1:
            return outs[0]
        return self.it.ev.new_seq(list(outs), st, kind="tuple")

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
        if items and (children.kind == "homogeneous" or self.it.ev.same_class(items, st) or len(items) == 1):
            return items[0]
        return UNKNOWN

    def object_iter_element(self, obj: ObjV, st: State) -> Value:
        children = st.attrs(obj.oid).get("__children__")
        if isinstance(children, SeqV):
            return self.it.ev.element_of(children, st)
        return UNKNOWN

    def assign_new_parameters(self, obj: ObjV, st: State, node: ast.AST) -> None:
        """``load_state_dict(sd, assign=True)``: torch puts a new Parameter wrapping the state dict's
        tensor in every parameter slot (measured under torch 2.13: ``m.weight is old`` is False
        after it), so an optimizer built before the call holds objects the forward no longer uses.
        Modelled as new parameters in the slots, made at the call (as ``weight_norm``: torchsem.py)."""
        for _, m in self.submodules(obj, st):
            for attr in list(st.attrs(m.oid)):
                self.replace_parameter(m, attr, st, node)

    def replace_parameter(self, mod: ObjV, attr: str, st: State, node: ast.AST) -> None:
        """A new Parameter, made at ``node``, in the slot ``attr`` of ``mod`` where a parameter sits
        (same name and ``requires_grad``): what ``load_state_dict(assign=True)`` and ``weight_norm``
        do to the slot; an optimizer built before holds the old object."""
        old = st.attrs(mod.oid).get(attr)
        if isinstance(old, TensorV) and old.tid in st.t and st.t[old.tid].param:
            new = self.it.graph.new_tensor(st, rg=st.t[old.tid].rg, node=node, param=True)
            st.update_t(new.tid, name=st.t[old.tid].name)
            st.set_attr(mod.oid, attr, new)

    def note_mode_switch(self, obj: ObjV, mode: bool, node: ast.AST, st: State, mods: Any) -> None:
        """``obj.train(mode)`` / ``obj.eval()`` (``mods``: the module and every submodule), or
        ``m.training = mode`` stored on one module (``mods``: that module alone)."""
        # where the mode was set, and in which loop iteration (the gradient-flow checks name the
        # call that left a module in eval mode for training: engine/checks/modes.py)
        at = ConstV((self.it.span_of(node), st.loop_ctx))
        for _, m in mods:
            st.set_attr(m.oid, "training", ConstV(mode))
            st.set_attr(m.oid, "__train_at__" if mode else "__eval_at__", at)
        # the receiver and the call depth of its last switch: a training step checks the
        # modules switched as a whole (engine/checks/modes.py, GW724)
        st.set_attr(obj.oid, "__mode_depth__", ConstV(len(self.it.call_stack)))
        if not mode:
            # switched off by a function that evaluates (it also runs a `no_grad`/`inference_mode`
            # block): an evaluation helper whose switch leaks into the training steps after it
            st.set_attr(obj.oid, "__eval_by_evaluator__",
                        ConstV(bool(self.it.call_stack) and _evaluates(self.it.call_stack[-1])))
        meta = st.own("meta")
        meta["mode_roots"] = meta.get("mode_roots", frozenset()) | {obj.oid}

    # ================================================================== object methods
    def builtin_object_attr(self, obj: ObjV, attr: str, st: State) -> Value:
        attrs = st.attrs(obj.oid)
        if "__ctx__" in attrs:
            if attr in ("saved_tensors", "saved_variables"):
                return self.it.functions.ctx_saved_tensors(obj, st)
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
            return self.it.optim.optimizer_method(obj, name, args, kwargs, st, node)
        if "__argparser__" in attrs:
            return self.it.builtins.parser_method(obj, name, args, kwargs, st)
        if "__sched__" in attrs:
            return self.it.optim.schedules.method(obj, name, st)
        if "__ctx__" in attrs:
            return self.it.functions.ctx_method(obj, name, args, st, node)
        if "__dist__" in attrs:
            return self.it.torch.distribution_method(obj, name, args, kwargs, st, node)
        if "__scaler__" in attrs:  # torch.amp.GradScaler: scale the loss, step the optimizer
            if name == "scale" and args and isinstance(args[0], TensorV):
                return self.it.graph.apply_op(st, None, [args[0]], self.it.span_of(node), "scale")[0]
            if name == "step" and args and isinstance(args[0], ObjV) and "__optim__" in st.attrs(args[0].oid):
                return self.it.optim.optimizer_method(args[0], "step", args[1:], kwargs, st, node)
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
                out = self.it.ev.new_seq([self.it.ev.new_seq([ConstV(n), t], st, kind="tuple") for n, t in params], st)
            else:
                out = self.it.ev.new_seq([t for _, t in params], st, kind="list")
            # a generator: an optimizer built over it reads it to its end (GW739: clipping it later clips nothing)
            make_oneshot(out, st, self.it.span_of(node), f"{self.it.tensors.receiver_text(node) or 'module'}.{name}")
            return out
        if name in ("modules", "named_modules", "children", "named_children"):
            mods = self.submodules(obj, st)
            if name in ("children", "named_children"):
                mods = [(n, m) for n, m in mods[1:] if "." not in n]
            if name.startswith("named"):
                return self.it.ev.new_seq([self.it.ev.new_seq([ConstV(n), m], st, kind="tuple") for n, m in mods], st)
            return self.it.ev.new_seq([m for _, m in mods], st)
        if name in ("items", "keys", "values") and not args:
            pairs = self._dict_children(obj, st)  # `for name, head in self.heads.items()` of a ModuleDict
            if pairs is not None:
                ev = self.it.ev
                return ev.new_seq([ev.new_seq([k, m], st, kind="tuple") if name == "items" else k if name == "keys" else m
                                   for k, m in pairs], st)
        if name in ("train", "eval"):
            mode = name == "train" and self.it.ev.truth_of(args[0] if args else kwargs.get("mode", TRUE)) is not False
            self.note_mode_switch(obj, mode, node, st, self.submodules(obj, st))
            return obj
        if name in ("to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "share_memory"):
            return obj
        if name == "load_state_dict" and self.it.ev.truth_of(kwargs.get("assign", args[2] if len(args) > 2 else FALSE)) is True:
            self.assign_new_parameters(obj, st, node)
            return UNKNOWN
        if name == "update_parameters" and "__averaged__" in st.attrs(obj.oid):
            owner = self.it.tensors.receiver_text(node) or "averaged_model"
            self.it.optim.update_in_place(st, [t.tid for _, t in self.module_params(obj, st)],
                                          f"{owner}.update_parameters()", self.it.span_of(node), owner)
            return NONE
        if name in ("register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook"):
            # not run by the analysis; what the module's forward hooks keep is read during every backward
            # (engine/checks/hookslots.py)
            st.set_attr(obj.oid, "__backward_hooked__", TRUE)
            return UNKNOWN
        if name in ("register_forward_hook", "register_forward_pre_hook"):
            fn = args[0] if args else kwargs.get("hook", UNKNOWN)
            if isinstance(fn, ObjV) and not self.is_module_obj(fn, st):
                # a hook object (`register_forward_hook(self)`): torch calls its `__call__`
                fn = self.it.ev.object_getattr(fn, "__call__", st, node)
            if not isinstance(fn, RefV) or kwargs.get("with_kwargs") not in (None, FALSE):
                return UNKNOWN
            entry = ("forward" if name == "register_forward_hook" else "pre", fn)
            hooks = st.attrs(obj.oid).get("__hooks__")
            st.set_attr(obj.oid, "__hooks__", ConstV((hooks.value if isinstance(hooks, ConstV) else ()) + (entry,)))
            handle = ObjV(fresh_id())
            st.set_attr(handle.oid, "__hook_of__", ConstV((obj.oid, entry)))
            return handle
        if name == "requires_grad_":
            flag = self.it.ev.truth_of(args[0] if args else kwargs.get("requires_grad", TRUE))
            for _, t in self.module_params(obj, st):
                st.update_t(t.tid, rg=flag)
            return obj
        if name == "zero_grad":
            self.it.optim.note_cleared(st, [t.tid for _, t in self.module_params(obj, st)], self.it.span_of(node))
            grads = st.own("grads")
            for _, t in self.module_params(obj, st):
                grads.pop(t.tid, None)
            return NONE
        if name == "state_dict":
            d = DictV(fresh_id())
            entries = []
            for n, t in self.module_params(obj, st, buffers=True):
                entries.append((("c", n), self.it.graph.alias_tensor(st, t, kind="detach", span=self.it.span_of(node),
                                                              rg=False, grad_fn=None)))
            st.own("dicts")[d.did] = tuple(entries)
            return d
        if name == "update" and args and args[0].__class__ is DictV:
            # `heads.update({"reg": nn.Linear(16, 1)})` of a ModuleDict/ParameterDict: one store per item,
            # as `heads["reg"] = ...` (an optimizer built before does not hold them)
            for k, v in st.dicts.get(args[0].did, ()):  # type: ignore[attr-defined]
                if not store_into_container(self.it, obj, self.it.ev.key_value(k), v, st):
                    break
            else:
                return NONE
        children = st.attrs(obj.oid).get("__children__")
        if isinstance(children, SeqV) and (name in ("append", "extend") and args or
                                           name in ("add_module", "register_module") and len(args) >= 2):
            # a container grown after construction (``model.add_module("relu_1", layer)``,
            # ``layers.append(block)``): its forward runs what was added, in order
            keys_v = st.attrs(obj.oid).get("__keys__")
            keys = list(st.lists.get(keys_v.lid, ())) if isinstance(keys_v, SeqV) else []
            kids = list(st.lists.get(children.lid, ()))
            if name == "extend":
                more = self.it.ev.known_items(args[0], st)
                new = more if more is not None else [self.it.ev.element_of(args[0], st)]
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
                    self.it.stores.note_store(val, st, node, held=True)
                st.set_attr(obj.oid, str(args[0].value), val)
            elif len(args) >= 2 and name != "register_buffer" and isinstance(args[1], (ObjV, TensorV)):
                # a name the analysis cannot read (`add_module(f"block{i}", b)` in a loop it joins): the
                # child is registered all the same, under a key no attribute read can name
                st.set_attr(obj.oid, f"?{args[1].oid if isinstance(args[1], ObjV) else args[1].tid}", args[1])
            return NONE
        if name == "__setattr__" and len(args) == 2 and isinstance(args[0], ConstV) and isinstance(args[0].value, str):
            # `self.__setattr__(head, nn.Sequential(...))`: `setattr(self, head, ...)` spelled as the
            # method nn.Module defines (CenterNet's heads built in a loop)
            self.module_setattr(obj, args[0].value, args[1], st)
            return NONE
        if name in ("__getattr__", "__getattribute__") and len(args) == 1 and isinstance(args[0], ConstV) \
                and isinstance(args[0].value, str):
            return self.it.ev.load_attr(obj, args[0].value, st, node)
        if name == "forward":
            return self.call_object(obj, args, kwargs, st, node)
        if name == "apply":
            if args:
                for _, m in self.submodules(obj, st):
                    self.it.ev.call(args[0], [m], {}, st, node)
            return obj
        if name == "get_submodule" and args and isinstance(args[0], ConstV) and isinstance(args[0].value, str):
            return self.submodule_at(obj, args[0].value, st)
        return UNKNOWN

    @staticmethod
    def _dict_children(obj: ObjV, st: State) -> Optional[List[Tuple[Value, Value]]]:
        """A ``ModuleDict``'s (key, module) pairs when every key is known, in insertion order."""
        attrs = st.attrs(obj.oid)
        qual, children, keys = attrs.get("__torch__"), attrs.get("__children__"), attrs.get("__keys__")
        if not (isinstance(qual, ConstV) and qual.value == "torch.nn.ModuleDict" and isinstance(children, SeqV)
                and isinstance(keys, SeqV) and children.kind != "homogeneous"):
            return None
        kids, names = st.lists.get(children.lid, ()), st.lists.get(keys.lid, ())
        if len(kids) != len(names) or not all(isinstance(k, ConstV) for k in names):
            return None
        return list(zip(names, kids))

    def submodule_at(self, obj: ObjV, target: str, st: State) -> Value:
        """``model.get_submodule("blocks.0.attn")``: attributes and container entries, dot by dot."""
        cur: Value = obj
        for part in target.split(".") if target else ():
            if not isinstance(cur, ObjV):
                return UNKNOWN
            nxt = st.attrs(cur.oid).get(part)
            if not isinstance(nxt, ObjV):
                nxt = self.object_getitem(cur, ConstV(int(part)) if part.isdigit() else ConstV(part), st)
            cur = nxt
        return cur if isinstance(cur, ObjV) else UNKNOWN

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
            self.it.writes.do_write(st, weight, "renorm of an embedding lookup with max_norm",
                                    span, kind="module", site=site, name=st.t[weight.tid].name or "weight",
                                    leaf_check=False)
        finally:
            st.grad_enabled = saved_mode

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
                built = self.it.optim.construct_optimizer(ref.target, args, kwargs, st, node)
                for k, v in st.attrs(built.oid).items():
                    st.set_attr(self_v.oid, k, v)
                meta = st.own("meta")
                opts = dict(meta.get("optimizers", {}))
                opts[self_v.oid] = opts.pop(built.oid, ())
                meta["optimizers"] = opts
                return NONE
            if ref.target.rsplit(".", 1)[-1] == "Optimizer" and ref.name.endswith("step"):
                return NONE  # abstract: the subclass's own step does the work
            return self.it.optim.optimizer_method(self_v, ref.name.rsplit(".", 1)[-1], args, kwargs, st, node)
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


def _evaluates(fdef: Any) -> bool:
    """A function that computes with gradients off: a `with torch.no_grad():` (or `inference_mode`)
    block in its body, or such a decorator."""
    if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False

    def off(expr: ast.expr) -> bool:
        f = expr.func if isinstance(expr, ast.Call) else expr
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in GRAD_OFF_CONTEXTS

    if any(off(d) for d in fdef.decorator_list):
        return True
    return any(isinstance(n, (ast.With, ast.AsyncWith)) and any(off(i.context_expr) for i in n.items)
               for n in ast.walk(fdef))
