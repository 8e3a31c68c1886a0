"""An optimizer given a one-shot iterator that an earlier optimizer already emptied (GW719, where
the iterator was made).

``params = filter(lambda p: ..., model.parameters())`` is an iterator: the first optimizer built
from it takes every parameter, and an optimizer rebuilt from the same object (a learning-rate
schedule that makes a new one each epoch) gets an empty group. The run sees both constructions
(the same iterator object, what each group received) and proves the loss at a step of the new
optimizer: a backward gave those parameters gradients, and no optimizer alive holds them.

Shown where the iterator was made, the static finding's line (the fix: ``list(...)`` there): a
generator's code, or the function a ``filter``/``map`` applies, when it is the user's; else at
the new optimizer's construction.
"""
import collections.abc
import inspect
import sys
import types
import warnings
import weakref

import torch

from . import optwatch as _optwatch
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _display_file, _is_user, _site, _user_frame

# one-shot: any iterator (its own `__iter__`, a `__next__`): `filter`, `map`, `zip`, `iter(...)`, a
# generator, and `itertools.chain(...)`, `islice`, a dict's value iterator, a class of the program's
_ITERATORS = collections.abc.Iterator
_MAX_ITERATORS = 256
_given = {}  # id(iterator) -> (the iterator, weakrefs to the parameters it gave, optimizer site)
_lost = weakref.WeakKeyDictionary()  # optimizer -> (where the iterator was made, lost parameter refs, first site)
_last = weakref.WeakKeyDictionary()  # optimizer -> backward count at its last step
# generator made by `module.parameters()` / `named_parameters()` called by the program -> (where, weakref(module))
_gen_made = weakref.WeakKeyDictionary()
_clipped = set()  # sites of the clipping calls already reported


def _made_at(it):
    """[file, line, function] where a one-shot iterator was made, when the run can tell."""
    made = _gen_made.get(it) if isinstance(it, types.GeneratorType) else None
    if made is not None:
        return made[0]
    code = None
    if isinstance(it, types.GeneratorType):
        code = it.gi_code
    else:
        try:
            fn = it.__reduce__()[1][0]
            code = getattr(fn, "__code__", None)
        except Exception:  # noqa: BLE001
            code = None
    if code is None or not _is_user(code.co_filename):
        return None
    return [_display_file(code.co_filename), code.co_firstlineno, code.co_name]


def _candidates(args, kwargs):
    """(group dict or None for the whole list, iterator) the optimizer is handed."""
    params = args[0] if args else kwargs.get("params")
    if isinstance(params, _ITERATORS):
        return [(None, params)]
    out = []
    if isinstance(params, (list, tuple)):
        for g in params[:64]:
            if isinstance(g, dict) and isinstance(g.get("params"), _ITERATORS):
                out.append((g, g["params"]))
    return out


def after_init(opt, candidates):
    """Once the optimizer is built: what each iterator gave it."""
    try:
        site = _site(_user_frame(_caller(2)))
        for group, it in candidates:
            got = group.get("params") if group is not None else (opt.param_groups[0]["params"] if opt.param_groups
                                                                  else [])
            got = [p for p in (got if isinstance(got, list) else []) if isinstance(p, torch.Tensor)]
            first = _given.get(id(it))
            if first is not None and first[0] is it:
                if got:
                    continue
                lost = [r for r in first[1] if r() is not None]
                if lost:
                    _lost[opt] = (_made_at(it) or site, lost, first[2])
                continue
            if len(_given) >= _MAX_ITERATORS:
                _given.clear()
            _given[id(it)] = (it, [weakref.ref(p) for p in got if p.requires_grad], site)
    except Exception:  # noqa: BLE001
        _internal_error("one-shot iterators: optimizer")


def on_step(opt, args, kwargs):
    """Global step pre-hook: the lost parameters got gradients that no live optimizer applies."""
    if _state.suspended or not _lost or opt not in _lost:
        return None
    try:
        n = _state.bw_count
        if n == 0 or _last.get(opt) == n:
            return None
        _last[opt] = n
        where, refs, first_site = _lost[opt]
        params = [p for p in (r() for r in refs) if p is not None]
        if not any(p.grad is not None for p in params):
            return None
        from .staleopt import _held_by_any

        held = _held_by_any()
        missed = [p for p in params if p.grad is not None and id(p) not in held]
        if not missed:
            return None
        del _lost[opt]
        from .untrained import _opt_sites

        name = type(opt).__name__
        sites = []
        here = _opt_sites.get(opt)
        if here is not None:
            sites.append({"kind": "optimizer", "site": here,
                          "message": "%s is built here from the emptied iterator: that group is empty" % name})
        if first_site is not None:
            sites.append({"kind": "optimizer", "site": first_site,
                          "message": "the first optimizer built from it took every parameter"})
        step = _site(_user_frame(_caller(1)))
        if step is not None:
            sites.append({"kind": "step", "site": step, "message": "%s.step() does not apply their gradients" % name})
        _finding(("oneshot", tuple(where or ())), code="GW719", kind="untrained-parameter", severity="warning",
                 site=where, sites=sites,
                 message="%d parameter(s) came to an optimizer through a one-shot iterator made here, which the "
                         "first optimizer built from it emptied: the %s rebuilt from it got an empty group, and the "
                         "gradients the loss now gives them are applied by no optimizer (make it a list once: "
                         "`list(...)`)" % (len(missed), name))
    except Exception:  # noqa: BLE001
        _internal_error("one-shot iterators: step")
    return None


def _exhausted(it):
    """(what an earlier consumer took from it, its site) when ``it`` is a one-shot iterator that gives
    nothing any more: an optimizer took every item, or a generator that finished. Else None."""
    first = _given.get(id(it))
    if first is not None and first[0] is it:
        return [r() for r in first[1]], first[2]
    if isinstance(it, types.GeneratorType) and inspect.getgeneratorstate(it) == inspect.GEN_CLOSED:
        made = _gen_made.get(it)
        module = made[1]() if made is not None else None
        params = [p for p in module.parameters()] if module is not None else []
        return params, None
    return None


def before_clip(fn_name, parameters):
    """``clip_grad_norm_(params, ...)`` / ``clip_grad_value_`` handed an iterator that an earlier
    consumer emptied (the optimizer built from the same ``model.parameters()`` generator): it clips
    nothing (the norm it returns is 0) while the parameters it was meant for have gradients, and the
    step applies them unclipped (GW739, where the iterator was made)."""
    if _state.suspended or not isinstance(parameters, _ITERATORS) or isinstance(parameters, torch.Tensor):
        return False
    try:
        ex = _exhausted(parameters)
        if ex is None:
            return False
        params, first_site = ex
        with_grad = [p for p in params if p is not None and p.grad is not None]
        if not with_grad:
            return True
        call = _site(_user_frame(_caller(2)))
        where = _made_at(parameters) or call
        if where is None or tuple(where[:2]) in _clipped:
            return True
        _clipped.add(tuple(where[:2]))
        sites = []
        if call is not None:
            sites.append({"kind": "call", "site": call, "message": "`%s` gets nothing from it here" % fn_name})
        if first_site is not None:
            sites.append({"kind": "optimizer", "site": first_site, "message": "the optimizer built here took every item"})
        _finding(("exhausted-clip", tuple(where)), code="GW739", kind="exhausted-iterator", severity="warning",
                 site=where, sites=sites,
                 message="a one-shot iterator made here was already emptied when `%s` got it: it clips nothing "
                         "(the norm it returns is 0) while %d parameter(s) it was meant for have gradients, and the "
                         "step applies them unclipped (make it a list once: `list(...)`, or pass "
                         "`model.parameters()` again)" % (fn_name, len(with_grad)))
    except Exception:  # noqa: BLE001
        _internal_error("one-shot iterators: clip")
    return True


def _patch_parameters():
    """Where the program made each ``parameters()`` / ``named_parameters()`` generator (a call from
    torch's own code is not noted)."""
    Module = torch.nn.Module
    for name in ("parameters", "named_parameters"):
        orig = getattr(Module, name)

        def wrapper(self, *args, _orig=orig, **kwargs):
            out = _orig(self, *args, **kwargs)
            try:
                f = sys._getframe(1)
                if _is_user(f.f_code.co_filename) and isinstance(out, types.GeneratorType) and not _state.suspended:
                    _gen_made[out] = (_site(f), weakref.ref(self))
            except Exception:  # noqa: BLE001
                pass
            return out

        wrapper.__wrapped__ = orig
        wrapper.__name__ = orig.__name__
        wrapper.__doc__ = orig.__doc__
        setattr(Module, name, wrapper)


def _patch_clipping():
    import torch.nn.utils as utils
    import torch.nn.utils.clip_grad as clip_grad

    # clip_grad_value_ raises on an empty list (torch 2.13): not silent, not wrapped
    for name in ("clip_grad_norm_",):
        orig = getattr(clip_grad, name, None)
        if orig is None:
            continue

        def wrapper(parameters, *args, _orig=orig, _name=name, **kwargs):
            before_clip(_name, parameters)
            if isinstance(parameters, types.GeneratorType):
                # torch makes a list of it and warns when it is empty, with a stacklevel that would now
                # name this frame: the same list and the same warning, from here, name the program's line
                parameters = list(parameters)
                if not parameters:
                    warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                                  UserWarning, stacklevel=2)
            return _orig(parameters, *args, **kwargs)

        wrapper.__wrapped__ = orig
        wrapper.__name__ = orig.__name__
        wrapper.__doc__ = orig.__doc__
        for mod in (clip_grad, utils):
            if getattr(mod, name, None) is orig:
                setattr(mod, name, wrapper)


def install():
    _patch_parameters()
    _patch_clipping()

    def before(args, kwargs):
        return _candidates(args, kwargs) if not _state.suspended else []

    def after(opt, candidates):
        if candidates:
            after_init(opt, candidates)

    _optwatch.on_build(after, before)
    _optwatch.on_step(on_step)
