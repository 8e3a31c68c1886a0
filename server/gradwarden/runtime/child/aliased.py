"""An optimizer over detached aliases of the model's parameters (GW707): ``SGD(model.state_dict()
.values())`` (``state_dict`` returns the tensors detached: same memory, no ``requires_grad``),
``[p.detach() for p in model.parameters()]``, ``[p.data for p in ...]``.

Such an optimizer's tensors never get a gradient, so ``step()`` changes nothing, while backward
gives the parameters behind them gradients no optimizer applies. The run proves it at a step that
follows a backward: every tensor the optimizer holds does not require grad, and each shares its
memory (same address, shape and strides) with a parameter of a module the run built that has a
gradient now. An optimizer over a frozen model (tensors that do not require grad, no gradient
anywhere) is not this. Shown where the optimizer was built (the fix hands it the parameters).
"""
import weakref

import torch

from . import optwatch as _optwatch
from .paramnames import describe, quoted
from .records import _mod_sites
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor
_checked = weakref.WeakKeyDictionary()  # optimizer -> backward count at its last check
_MAX_CHECKS = 2
_MAX_TENSORS = 4096
_MAX_MODULES = 4096


def on_step(opt, args, kwargs):
    if _state.suspended or _mod_sites is None or _state.bw_count == 0:
        return None
    try:
        last = _checked.get(opt)
        if last is not None and (last[0] >= _MAX_CHECKS or last[1] == _state.bw_count):
            return None
        _checked[opt] = ((last[0] + 1) if last else 1, _state.bw_count)
        held = [p for g in opt.param_groups for p in g.get("params", ()) if isinstance(p, _Tensor)]
        if not held or len(held) > _MAX_TENSORS or any(p.requires_grad for p in held):
            return None
        params = {}
        for m in list(_mod_sites.keys())[:_MAX_MODULES]:
            for p in getattr(m, "_parameters", {}).values():
                if isinstance(p, _Tensor) and p.requires_grad and p.grad is not None:
                    params[(p.data_ptr(), tuple(p.shape), p.stride())] = p
        behind = [params.get((t.data_ptr(), tuple(t.shape), t.stride())) for t in held]
        if not behind or any(p is None for p in behind):
            return None
        _report(opt, held, behind, _site(_user_frame(_caller(1))))
    except Exception:  # noqa: BLE001
        _internal_error("aliased optimizer")
    return None


def _report(opt, held, behind, step_site):
    from . import untrained as _untrained

    where = _untrained._opt_sites.get(opt)
    if where is None:
        return
    name = type(opt).__name__
    names = [quoted(p, describe(p)[0]) for p in behind[:3]]
    more = " and %d more" % (len(behind) - 3) if len(behind) > 3 else ""
    sites = []
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site, "message": "%s.step() changes nothing" % name})
    _finding(("aliased-optimizer", tuple(where), id(opt)), code="GW707", kind="optimizer-without-grad",
             severity="warning", site=where, sites=sites,
             message="%s is given %d tensor(s) that do not require grad and share their memory with the "
                     "parameters %s%s (detached aliases: `state_dict()` values, `.detach()`, `.data`): they never "
                     "get a gradient, so step() changes nothing, while backward gives the parameters themselves "
                     "gradients no optimizer applies (hand it the parameters: `model.parameters()`)" % (
                         name, len(held), ", ".join(names), more))


def install():
    _optwatch.on_step(on_step)
