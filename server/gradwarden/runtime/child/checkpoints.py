"""A reentrant checkpoint that cannot give its module's parameters a gradient (GW708).

The reentrant ``torch.utils.checkpoint.checkpoint`` runs its function under ``no_grad`` and
records one node for the whole block, whose inputs are the tensors passed in: when none of
them requires grad, the output has no graph and the parameters used inside the block never
get a gradient. torch only warns (*None of the inputs have requires_grad=True*), and programs
filter that warning (it is noisy in evaluation), so the bridge sees the call itself: every
reentrant checkpoint reaches ``CheckpointFunction.apply`` (the Function.apply patch of
``ctxstash`` calls ``check`` first). Reported when grad mode is on, no tensor input requires
grad and the checkpointed function is (or closes over, or is a method of) modules with
parameters that require grad; a plain function whose parameters cannot be seen is left alone.
torch's warning itself is not reported (report.py): it also comes under ``no_grad``, where
nothing is lost.
"""
import functools

import torch

from .records import _mod_sites
from .report import _finding, _internal_error
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor


def _function_class():
    try:
        from torch.utils.checkpoint import CheckpointFunction
    except Exception:  # noqa: BLE001
        return None
    return CheckpointFunction


CHECKPOINT_FUNCTION = _function_class()


def _modules_of(fn, depth=0):
    """The nn.Modules that ``fn`` runs: itself, its bound instance, a partial's function and
    arguments, the modules its closure holds (a ``checkpoint_sequential`` segment)."""
    Module = torch.nn.Module
    if isinstance(fn, Module):
        return [fn]
    if depth > 2:
        return []
    out = []
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, Module):
        out.append(owner)
    if isinstance(fn, functools.partial):
        out.extend(_modules_of(fn.func, depth + 1))
        for a in fn.args:
            if isinstance(a, Module):
                out.append(a)
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, Module):
            out.append(value)
        elif isinstance(value, (list, tuple)) and len(value) < 1000:
            out.extend(v for v in value if isinstance(v, Module))
    return out


def check(args):
    """``args`` of ``CheckpointFunction.apply``: (function, preserve_rng_state, *inputs)."""
    try:
        if len(args) < 2 or not torch.is_grad_enabled():
            return
        inputs = args[2:]
        if any(isinstance(a, _Tensor) and a.requires_grad for a in inputs):
            return
        params = {}
        for m in _modules_of(args[0]):
            for p in m.parameters():
                if p.requires_grad:
                    params[id(p)] = p
        if not params:
            return
        site = _site(_user_frame(_caller(2)))
        if site is None:
            return
        name = _describe_fn(args[0])
        sites = []
        for m in _modules_of(args[0])[:1]:
            built = _mod_sites.get(m) if _mod_sites is not None else None
            if built is not None:
                sites.append({"kind": "created", "site": built, "message": "%s is built here" % type(m).__name__})
        _finding(("checkpoint", tuple(site)), code="GW708", kind="checkpoint-without-grad", severity="warning",
                 site=site, sites=sites,
                 message="reentrant checkpoint of %s: none of its inputs requires grad, so its output has no graph "
                         "and its %d trainable parameter tensor(s) get no gradient from it (use_reentrant=False "
                         "tracks them)" % (name, len(params)))
    except Exception:  # noqa: BLE001
        _internal_error("checkpoint")


def _describe_fn(fn):
    if isinstance(fn, torch.nn.Module):
        return "`%s`" % type(fn).__name__
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return "`%s`" % name if name else "a function"
