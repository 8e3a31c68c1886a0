"""GW604: a tensor a module keeps as a plain attribute where an ``nn.Parameter`` belongs.

``self.log_vars = torch.zeros(n, requires_grad=True)`` in a module's ``__init__`` (Kendall-style
uncertainty weights, a learned temperature, a prompt) is a leaf that the loss gives a gradient, but
``nn.Module`` registers only ``Parameter``s: ``module.parameters()`` does not list it, so an
optimizer built over the modules' parameters never holds it and every step leaves it as it was,
silently (measured under torch 2.13: the gradient is there, the values never move).

Decided at a training step after a backward (in a loop): the tensor is an attribute of a module
object, a leaf that requires grad and is not a parameter, has a gradient, no optimizer of the program
holds it, the program never assigns its ``.grad`` nor writes it after the first backward (an update by
hand: an adversarial perturbation stepped with ``delta.grad.sign()``). Reported where it is made, once.
"""
from __future__ import annotations

import os
from typing import Any

from gradwarden.engine.checks.flowfacts import optimizer_params
from gradwarden.engine.diagnostic import Related, Span
from gradwarden.engine.events import Event
from gradwarden.engine.state.model import State, TensorV


def check_unregistered_tensors(checks: Any, st: State, span: Span) -> None:
    flow, it = checks.flow, checks.it
    meta = st.meta
    if not meta.get("reach_backwards") or not st.loop_ctx or meta.get("reach_open"):
        return
    done = flow.__dict__.setdefault("unregistered_done", set())
    held = None
    first = meta.get("reach_first_backward", 0)
    for oid, attrs in st.objs.items():
        if "__module__" not in attrs:
            continue
        for name, v in attrs.items():
            if v.__class__ is not TensorV or name.startswith("__") or v.tid in done:
                continue
            info = st.t.get(v.tid)
            if info is None or info.param or not info.leaf or info.rg is not True or not st.grads.get(v.tid) \
                    or info.created is None or v.tid in flow.manual_grads or v.tid in flow.fake_leaves:
                continue
            if any(w.seq > first for w in st.writes.get(info.counter, ()) + st.data_writes.get(info.storage, ())):
                continue  # updated by the program itself
            if held is None:
                held = {t for other in flow.opt_sites for t in optimizer_params(st, other)}
            if v.tid in held:
                continue
            done.add(v.tid)
            where = info.created
            step = f"line {span.row}" if span.file == where.file else \
                f"line {span.row} of `{os.path.basename(span.file or it.filename or '?')}`"
            it.emit(Event("unregistered_tensor", where, {"name": f"self.{name}", "step": step},
                related=(Related(span, "stepped here without it", "step"),)))
