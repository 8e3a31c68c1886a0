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
import types
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


def _made_at(it):
    """[file, line, function] where a one-shot iterator was made, when the run can tell."""
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


def install():
    def before(args, kwargs):
        return _candidates(args, kwargs) if not _state.suspended else []

    def after(opt, candidates):
        if candidates:
            after_init(opt, candidates)

    _optwatch.on_build(after, before)
    _optwatch.on_step(on_step)
