"""A scheduler that holds an optimizer's learning rate at exactly 0 at every step (GW741), or from
one of its decays to the end of the run (GW744).

``LambdaLR(opt, lambda s: min(1, s // warmup))`` (an integer division where ``s / warmup`` was
meant), a schedule whose factor is 0 until a step the run never reaches: backward fills the
gradients, ``step()`` runs, and nothing moves. Exact and cheap to see: at a step that follows a
backward, every group's ``lr`` is 0 while its base rate (``initial_lr``, which a scheduler keeps)
is not, and a parameter of the optimizer has a non-zero gradient. One step with a zero rate is a
warm-up's first step (``s / warmup`` at ``s = 0``); the finding needs every step the run saw after
a backward (at least ``_MIN_STEPS``) to be so, and an optimizer that ever steps with a non-zero
rate is never reported. ``lr=0`` given to the optimizer itself is a choice the program states (a
script that measures gradients without moving the weights), not this. Reported when the run
ends, at the scheduler that set the rate (its construction: the factor function is its argument;
the function's own line is a related site when it is elsewhere).
"""
import weakref

import torch

from . import optwatch as _optwatch
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _display_file, _is_user, _site, _user_frame

_MIN_STEPS = 2
_MAX_OPTIMIZERS = 64


class _Rec(object):
    __slots__ = ("site", "zero", "done", "last", "step", "name", "live", "tail", "since")

    def __init__(self, site, name):
        self.site = site  # where the optimizer was built
        self.zero = 0  # steps after a backward with every rate 0 and a non-zero gradient
        self.done = False  # a step with a non-zero rate: never reported as "always"
        self.last = -1  # backward count at its last step
        self.step = None
        self.name = name
        self.live = 0  # steps after a backward with a non-zero rate
        self.tail = 0  # zero-rate steps (non-zero gradients) since the last step with a non-zero rate
        self.since = 0  # the number of the step (after a backward) that began that tail


_recs = {}  # id(optimizer) -> _Rec (by id: the optimizer may be freed before the run ends)
_alive = weakref.WeakKeyDictionary()  # optimizer -> its _Rec
_scheds = {}  # id(optimizer) -> (scheduler class name, where it was built, the factor function's site or None)


def note_optimizer(opt, _seen):
    if len(_recs) >= _MAX_OPTIMIZERS:
        return
    try:
        site = _site(_user_frame(_caller(2)))
        if site is not None:
            _alive[opt] = _recs[id(opt)] = _Rec(site, type(opt).__name__)
    except Exception:  # noqa: BLE001
        _internal_error("zero learning rate: optimizer")


def _all_zero(opt):
    """Every group's rate is 0 while its base rate is not (a scheduler set it)."""
    groups = opt.param_groups
    if not groups:
        return False
    for g in groups:
        lr, base = g.get("lr"), g.get("initial_lr")
        try:
            if lr is None or base is None or float(lr) != 0.0 or float(base) == 0.0:
                return False
        except Exception:  # noqa: BLE001
            return False
    return True


def _nonzero_grad(opt):
    with torch.no_grad():
        for g in opt.param_groups:
            for p in g.get("params", ()):
                grad = getattr(p, "grad", None)
                if isinstance(grad, torch.Tensor) and not grad.is_sparse and bool(grad.ne(0).any()):
                    return True
    return False


def on_step(opt, args, kwargs):
    """Global step pre-hook."""
    if _state.suspended:
        return None
    rec = _alive.get(opt)
    if rec is None:
        return None
    try:
        n = _state.bw_count
        if n == 0 or rec.last == n:
            return None
        rec.last = n
        if not _all_zero(opt):
            rec.done = True
            rec.live += 1
            rec.tail = 0
            return None
        if _nonzero_grad(opt):
            if not rec.done:
                rec.zero += 1
            elif not _scheduler_zero(id(opt)):
                return None  # a rate the program wrote itself: not counted
            elif rec.tail == 0:
                rec.since = rec.live + 1
            rec.tail += 1
            if rec.step is None:
                rec.step = _site(_user_frame(_caller(1)))
    except Exception:  # noqa: BLE001
        _internal_error("zero learning rate: step")
    return None


def _patch_scheduler():
    """Where each learning-rate scheduler is built, for the optimizer it drives."""
    sched = getattr(torch.optim.lr_scheduler, "LRScheduler", None) or \
        getattr(torch.optim.lr_scheduler, "_LRScheduler", None)
    if sched is None:
        return
    orig = sched.__init__

    def __init__(self, optimizer, *args, **kwargs):
        orig(self, optimizer, *args, **kwargs)
        try:
            if id(optimizer) in _recs and id(optimizer) not in _scheds:
                site = _site(_user_frame(_caller(1)))
                if site is not None:
                    _scheds[id(optimizer)] = (type(self).__name__, site, _factor_site(self), weakref.ref(self),
                                              getattr(self, "gamma", None))
        except Exception:  # noqa: BLE001
            _internal_error("zero learning rate: scheduler")

    __init__.__wrapped__ = orig
    sched.__init__ = __init__


def _factor_site(sched):
    """[file, line, name] of the program's factor function (``LambdaLR``'s ``lr_lambda``), or None."""
    for fn in getattr(sched, "lr_lambdas", None) or ():
        code = getattr(fn, "__code__", None)
        if code is not None and _is_user(code.co_filename):
            return [_display_file(code.co_filename), code.co_firstlineno, code.co_name]
    return None


def finish():
    """When the run ends: the optimizers that never stepped with a non-zero rate."""
    try:
        for key, rec in list(_recs.items()):
            sched = _scheds.get(key)
            if sched is None:
                continue
            if rec.done:
                if rec.tail >= _MIN_STEPS:
                    _decayed_to_zero(key, rec, sched)
                continue
            if rec.zero < _MIN_STEPS:
                continue
            sites = [{"kind": "optimizer", "site": rec.site, "message": "%s is built here" % rec.name}]
            if rec.step is not None:
                sites.append({"kind": "step", "site": rec.step, "message": "%s.step() changes nothing" % rec.name})
            kind, where, factor = sched[:3]
            if factor is not None and list(factor[:2]) != list(where[:2]):
                sites.append({"kind": "note", "site": factor, "message": "the factor it computes is 0"})
            why = "the %s built here sets it (its factor is 0 at every step the run made)" % kind
            _finding(("zero-lr", tuple(where), key), code="GW741", kind="learning-rate-always-zero", severity="warning",
                     site=where, sites=sites,
                     message="%s steps with a learning rate of exactly 0 in every parameter group at each of the %d "
                             "steps after a backward, while its parameters have non-zero gradients: nothing trains; "
                             "%s" % (rec.name, rec.zero, why))
    except Exception:  # noqa: BLE001
        _internal_error("zero learning rate: finish")


def _scheduler_zero(key):
    """The last rates the optimizer's scheduler computed are all exactly 0."""
    sched = _scheds.get(key)
    obj = sched[3]() if sched is not None else None
    last = getattr(obj, "_last_lr", None) if obj is not None else None
    try:
        return bool(last) and all(float(v) == 0.0 for v in last)
    except Exception:  # noqa: BLE001
        return False


def _decayed_to_zero(key, rec, sched):
    """The rate was non-zero at the first steps, then the scheduler made it exactly 0 in every group
    and it stayed 0 at every later step the run saw (two or more, with non-zero gradients): a
    ``StepLR``/``ExponentialLR``/``MultiStepLR`` with ``gamma=0``, a decay to 0 shorter than the loop.
    The scheduler's own last rates are 0 (a rate the program wrote itself is not this)."""
    kind, where, gamma = sched[0], sched[1], sched[4]
    sites = [{"kind": "optimizer", "site": rec.site, "message": "%s is built here" % rec.name}]
    if rec.step is not None:
        sites.append({"kind": "step", "site": rec.step, "message": "%s.step() changes nothing from here on" % rec.name})
    why = " (`gamma=%g`)" % gamma if isinstance(gamma, (int, float)) and gamma == 0 else ""
    _finding(("zero-lr-tail", tuple(where), key), code="GW744", kind="learning-rate-decayed-to-zero", severity="warning",
             site=where, sites=sites,
             message="the %s built here%s sets %s's learning rate to exactly 0 in every parameter group from its "
                     "step %d after a backward on: those %d steps (to the end of the run) change nothing while "
                     "the parameters have non-zero gradients, so training stops there" % (
                         kind, why, rec.name, rec.since, rec.tail))


def install():
    _optwatch.on_build(note_optimizer)
    _optwatch.on_step(on_step)
    _patch_scheduler()
    _state.finalizers.append(finish)
