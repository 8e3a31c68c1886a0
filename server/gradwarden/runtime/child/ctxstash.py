"""Intermediates kept on ``ctx`` (GW310): a custom Function's forward computes a tensor from an
input that requires grad and stores it as ``ctx.name`` instead of saving it with
``save_for_backward``. forward runs without grad, so that tensor carries no graph; a
``create_graph=True`` backward that reads it treats it as a constant and silently drops the
terms of the higher-order gradient that come from it (torch raises nothing).

While a user Function's forward runs, the mode (``mode.py``) reports every call: the tensors
computed from its inputs (transitively, floating point only: a mask's derivative is zero) are
"derived". After forward, the ctx attributes holding a derived tensor are remembered, with the
line of the ``ctx.name =`` store. When that Function's backward
runs with grad enabled (``create_graph=True``) and its code reads the attribute, the run has
proof of the hazard.
"""
import sys

import torch

from . import checkpoints as _checkpoints
from . import contract as _contract
from .graphtags import _built_sites, _tag_built
from .records import _node_name
from .report import _finding, _internal_error, _state
from .userfiles import _display_file, _lined_instructions

_Tensor = torch.Tensor
_STASH = "_gradwarden_stash"  # attribute set on the ctx: [(name, site)] of derived tensors kept there

# factories that only read their argument's shape, dtype and device
_SHAPE_ONLY = frozenset(
    f for f in (getattr(torch.Tensor, n, None) for n in ("new_ones", "new_zeros", "new_full", "new_empty",
                                                           "new_tensor", "size", "dim"))
    if f is not None) | frozenset(
    f for f in (getattr(torch, n, None) for n in ("zeros_like", "ones_like", "empty_like", "full_like",
                                                    "rand_like", "randn_like", "randint_like"))
    if f is not None)


class _Frame(object):
    __slots__ = ("ids", "keep", "nseeds")

    def __init__(self, seeds):
        self.ids = {id(t) for t in seeds}
        self.keep = list(seeds)  # alive while the frame is, so the ids stay theirs
        self.nseeds = len(seeds)  # keep[:nseeds]: the inputs themselves


_frames = []  # one per running forward of a user Function with an input that requires grad


def _tensors(value):
    if isinstance(value, _Tensor):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            if isinstance(v, _Tensor):
                yield v


def _touches(values, ids):
    return any(id(t) in ids for v in values for t in _tensors(v))


def note_call(func, args, kwargs, out):
    """Called by the mode for every call while ``_frames`` is not empty."""
    try:
        if func in _SHAPE_ONLY:
            return
        frame = _frames[-1]
        ids = frame.ids
        if not (_touches(args, ids) or (kwargs and _touches(kwargs.values(), ids))):
            return
        for t in _tensors(out):
            if t.is_floating_point() or t.is_complex():
                ids.add(id(t))
                frame.keep.append(t)
    except Exception:  # noqa: BLE001
        _internal_error("ctx derived")


def _user_class(cls):
    module = getattr(cls, "__module__", "") or ""
    return not module.startswith("torch.")


def _patch_apply():
    Function = torch.autograd.Function
    raw = Function.__dict__.get("apply")
    if not isinstance(raw, classmethod):
        return
    orig = raw.__func__

    checkpoint_function = _checkpoints.CHECKPOINT_FUNCTION

    def apply(cls, *args, **kwargs):
        if cls is checkpoint_function and not _state.suspended:
            _checkpoints.check(args)
        if _state.suspended or not _user_class(cls):
            return orig(cls, *args, **kwargs)
        try:
            if not torch.is_grad_enabled():
                return orig(cls, *args, **kwargs)
            seeds = [a for a in args if isinstance(a, _Tensor) and a.requires_grad]
            if not seeds:
                return orig(cls, *args, **kwargs)
            frame = _Frame(seeds)
            _frames.append(frame)
            try:
                out = orig(cls, *args, **kwargs)
            finally:
                _frames.pop()
        except TypeError as exc:
            # raised once forward returned: a non-tensor given to ctx.save_for_backward (GW738)
            _contract.raised_in_apply(cls, exc, sys._getframe(1))
            raise
        # Function.apply is not a torch function: the mode never sees it, so its node is tagged
        # here with where it was applied
        _tag_built(out)
        if len(frame.ids) > frame.nseeds:
            _attach(cls, out, frame)
        return out

    apply.__wrapped__ = orig
    Function.apply = classmethod(apply)


def _attach(cls, out, frame):
    """After forward: the ctx attributes that hold a derived tensor (not an input: an input kept
    on ctx is the real one, with its graph in a create_graph backward) are remembered on it."""
    try:
        for t in _tensors(out):
            node = t.grad_fn
            if node is not None and getattr(node, "_forward_cls", None) is cls:
                seeds = frame.keep[:frame.nseeds]
                kept = []
                for name, value in list(vars(node).items()):
                    if isinstance(value, _Tensor) and id(value) in frame.ids and \
                            not any(value is s for s in seeds):
                        kept.append((name, _store_line(cls, name)))
                if kept:
                    setattr(node, _STASH, kept)
                return
    except Exception:  # noqa: BLE001
        _internal_error("ctx stash")


def _store_line(cls, name):
    """[file, line, function] of the ``ctx.<name> = ...`` in the Function's ``forward`` (or
    ``setup_context``), read from its bytecode: no hook on ctx attributes (Dynamo inlines such a
    hook when it traces a custom Function in a compiled region), or None."""
    for meth in ("forward", "setup_context"):
        code = getattr(getattr(cls, meth, None), "__code__", None)
        if code is None:
            continue
        try:
            for line, ins in _lined_instructions(code):
                if ins.opname == "STORE_ATTR" and ins.argval == name:
                    return [_display_file(code.co_filename), line, code.co_name]
        except Exception:  # noqa: BLE001
            continue
    return None


def check_backward(node):
    """Before a custom backward runs: with grad enabled, an attribute it reads that holds a
    derived tensor without a graph is a constant in the gradient being built."""
    stash = getattr(node, _STASH, None)
    if not stash or not torch.is_grad_enabled():
        return
    try:
        cls = getattr(node, "_forward_cls", None)
        code = getattr(getattr(cls, "backward", None), "__code__", None)
        names = set(code.co_names) if code is not None else set()
        for name, site in stash:
            value = getattr(node, name, None)
            if name not in names or not isinstance(value, _Tensor) or value.requires_grad:
                continue
            sites = []
            bw = _state.cur_bw[1] if _state.cur_bw else None
            if bw is not None:
                sites.append({"kind": "backward", "site": bw,
                              "message": "create_graph=True differentiates through %s here" % cls.__name__})
            built = _built_sites(node)
            if built is not None and built[0] is not None:
                sites.append({"kind": "call", "site": built[0], "message": "%s is applied here" % cls.__name__})
            _finding(("ctx-stash", tuple(site or ()), name), code="GW310", kind="ctx-intermediate",
                     severity="warning", site=site or (built[0] if built else None), backward_site=bw, sites=sites,
                     message="`%s` keeps `ctx.%s`, computed in forward from its input, outside save_for_backward: "
                             "this create_graph=True backward%s reads it as a constant, so the gradient it builds "
                             "silently drops the terms that come from `%s` (%s)" % (
                                 cls.__name__, name, (" (line %s)" % bw[1]) if bw else "", name, _node_name(node)))
    except Exception:  # noqa: BLE001
        _internal_error("ctx stash check")


def install():
    _patch_apply()
