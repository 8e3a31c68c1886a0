"""``torch.func.functional_call(module, tensors, args)`` (and ``torch.nn.utils.stateless.functional_call``):
the module's forward run with the given tensors in its parameter and buffer slots, by their dotted
names, for this call only. A loss computed from it reaches those tensors, not the module's own
parameters: an inner loop started from ``{n: p.detach().requires_grad_() ...}`` copies (a MAML port)
trains the copies, and a meta-optimizer over ``model.parameters()`` steps parameters no loss reaches."""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.state.model import UNKNOWN, ConstV, DictV, ObjV, SeqV, State, TensorV, Value

FUNCTIONAL_CALLS = frozenset({"torch.func.functional_call", "torch.nn.utils.stateless.functional_call",
                              "torch._functorch.functional_call.functional_call"})


def _slots(it: Any, module: ObjV, st: State) -> Dict[str, Tuple[ObjV, str]]:
    """Dotted name -> (owning module, attribute) of every tensor slot of ``module``."""
    out: Dict[str, Tuple[ObjV, str]] = {}
    for prefix, m in it.modules.submodules(module, st):
        for attr, v in st.attrs(m.oid).items():
            if isinstance(v, TensorV) and not attr.startswith("__"):
                out[f"{prefix}.{attr}" if prefix else attr] = (m, attr)
    return out


def functional_call(it: Any, args: List[Value], kwargs: Dict[str, Value], st: State, node: ast.AST) -> Optional[Value]:
    """The module run with the dict's tensors in its slots; None when the call cannot be followed
    (the caller then treats it as an opaque call)."""
    module = args[0] if args else kwargs.get("module")
    given = args[1] if len(args) > 1 else kwargs.get("parameter_and_buffer_dicts", kwargs.get("parameters_and_buffers"))
    inputs = args[2] if len(args) > 2 else kwargs.get("args", UNKNOWN)
    if not isinstance(module, ObjV) or not isinstance(given, DictV) or not it.modules.is_module_obj(module, st):
        return None
    entries = st.dicts.get(given.did, ())
    slots = _slots(it, module, st)
    swaps: List[Tuple[ObjV, str, Value]] = []
    for key, value in entries:
        name = key[1] if isinstance(key, tuple) and len(key) == 2 else None
        if not isinstance(name, str) or name not in slots or not isinstance(value, TensorV):
            return None  # a name the analysis cannot place: the call runs on tensors it does not see
        owner, attr = slots[name]
        swaps.append((owner, attr, st.attrs(owner.oid)[attr]))
    if not entries:
        return None
    call_args = list(st.lists.get(inputs.lid, ())) if isinstance(inputs, SeqV) else [inputs]
    for (owner, attr, _), (_, value) in zip(swaps, entries):
        st.set_attr(owner.oid, attr, value)
    try:
        out = it.modules.call_object(module, call_args, {}, st, node)
    finally:
        for owner, attr, old in swaps:
            st.set_attr(owner.oid, attr, old)
    return out
