"""Polluted gradients (GW503): an optimizer steps with ``.grad`` that still holds the gradient of
another optimizer's loss.

The run follows, for every parameter of every optimizer it saw built, which top-level
``backward`` calls added to its ``.grad`` since the gradient was last cleared or set by other
means (``zero_grad``, ``p.grad = None``, a write outside backward: each restarts the count,
so an unexplained change can only hide a finding, never make one). Gradient accumulation (two
backward calls, then one step) is the normal case. The hazard is the GAN shape: backward #1
fills the parameters of optimizers B and A, B steps (so #1 was B's loss), backward #2 adds to
A's parameters and goes through B's again (A's loss is computed through B: G's loss through D),
and A steps with the sum, the other model's loss included. One loss per head over a shared trunk
(an optimizer per head, one for the trunk) does not go through the other heads: not this.
"""
import weakref
from collections import deque

import torch

from . import optwatch as _optwatch
from .graphtags import _built_sites
from .report import _finding, _internal_error, _state
from .tensors import tensor_registry
from .userfiles import _caller, _site, _user_frame

_optimizers = weakref.WeakSet()  # every torch.optim.Optimizer built in the run
_grads = tensor_registry()  # parameter -> [id of its .grad, its version, backward numbers added since]
_losses = {}  # backward number -> (backward site, loss site): the last few
_steps = deque(maxlen=64)  # (weakref(optimizer), backward count, backward numbers in its grads, step site)
_MAX_PARAMS = 20000  # a model bigger than this is not followed (the check is per backward)


def _params(opt):
    out = []
    try:
        for group in opt.param_groups:
            for p in group.get("params", ()):
                if isinstance(p, torch.Tensor):
                    out.append(p)
    except Exception:  # noqa: BLE001
        return []
    return out


def _all_params():
    seen, out = set(), []
    for opt in list(_optimizers):
        for p in _params(opt):
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
                if len(out) > _MAX_PARAMS:
                    return None
    return out


def _followed():
    """The parameters whose gradients are followed (none without optimizers or registries)."""
    if _grads is None or not _optimizers:
        return ()
    return _all_params() or ()


def _grad_state(p):
    g = p.grad
    if g is None:
        return None
    try:
        return id(g), g._version
    except Exception:  # noqa: BLE001
        return id(g), -1


def before_backward():
    """Before a top-level ``backward``: a ``.grad`` changed since the last backward saw it was
    cleared or set outside backward; its count starts again."""
    try:
        for p in _followed():
            now = _grad_state(p)
            rec = _grads.get(p)
            if now is None:
                if rec is not None:
                    del _grads[p]
            elif rec is None or (rec[0], rec[1]) != now:
                _grads[p] = [now[0], now[1], []]
    except Exception:  # noqa: BLE001
        _internal_error("gradients before backward")


def after_backward(n, roots, site):
    """After top-level backward #n returned: the parameters whose ``.grad`` it changed."""
    if _grads is None or not _optimizers:
        return
    try:
        for p in _followed():
            now = _grad_state(p)
            if now is None:
                continue
            rec = _grads.get(p)
            if rec is None:
                _grads[p] = [now[0], now[1], [n]]
            elif (rec[0], rec[1]) != now:
                rec[0], rec[1] = now
                rec[2].append(n)
        loss = None
        for t in roots:
            built = _built_sites(t.grad_fn) if t.grad_fn is not None else None
            if built is not None and built[0] is not None:
                loss = built[0]
                break
        _losses[n] = (site, loss)
        for old in [k for k in _losses if k <= n - 64]:
            del _losses[old]
    except Exception:  # noqa: BLE001
        _internal_error("gradients after backward")


_deferred = []  # [leaf, backward number, finding fields]: GW405 findings waiting for a step


def defer_stale(leaf, n, fields):
    """A stale-graph finding whose gradient went into ``leaf``'s .grad (backward #n): decided
    when an optimizer steps ``leaf`` (``_stepped_with_stale``). False when no optimizer holds
    ``leaf`` (a manual update: said now)."""
    if _grads is None or not any(any(p is leaf for p in _params(o)) for o in list(_optimizers)):
        return False
    _deferred.append([leaf, n, fields])
    return True


def _stepped_with_stale(leaf, n):
    """Does the .grad a step is about to use still hold backward #n's stale gradient? No when
    it is None, or when it is the tensor the backward calls since its last clear left (even if
    changed in place since, by clipping): then the record says whether #n is among them (SAC's
    temperature: its stale gradient from the actor's backward is cleared before its own).
    Yes when it is another tensor, put there by other means (saved and restored): it cannot
    be shown clean, and the stale gradient went into .grad."""
    now = _grad_state(leaf)
    if now is None:
        return False
    rec = _grads.get(leaf)
    if rec is not None and rec[0] == now[0]:
        return n in rec[2]
    return True


def _check_deferred(opt, params, site):
    keep = []
    for entry in _deferred:
        leaf, n, fields = entry
        if not any(p is leaf for p in params):
            keep.append(entry)
            continue
        if not _stepped_with_stale(leaf, n):
            continue
        fields = dict(fields)
        if site is not None:
            fields["sites"] = list(fields.get("sites") or []) + [
                {"kind": "step", "site": site, "message": "%s.step() updates with the stale gradient" %
                 type(opt).__name__}]
        _finding(fields.pop("key"), **fields)
    _deferred[:] = keep


def _on_step(opt, args, kwargs):
    """The global step pre-hook: check ``opt``'s gradients, then remember this step."""
    if _state.suspended or _grads is None:
        return None
    try:
        site = _site(_user_frame(_caller(1)))
        params = _params(opt)
        _check_step(opt, params, site)
        if _deferred:
            _check_deferred(opt, params, site)
        _steps.append((weakref.ref(opt), _state.bw_count, frozenset(_filled_by(params)), site))
    except Exception:  # noqa: BLE001
        _internal_error("optimizer step")
    return None


def _check_step(opt, params, site):
    for p in params:
        rec = _grads.get(p)
        if rec is None or len(rec[2]) < 2:
            continue
        added = rec[2]
        last = added[-1]
        for ref, count, counts, other_site in _steps:
            other = ref()
            if other is None or other is opt:
                continue
            # backward #b filled the other optimizer's parameters too, and that optimizer stepped
            # after it and before the last backward that added to these: #b was its loss
            for b in added[:-1]:
                if _stepped_with(opt, b):
                    # this optimizer already stepped with #b: its own gradients were never cleared
                    # (heldgrads.py's GW710), not another optimizer's loss
                    return
                if b in counts and b <= count < last and _reached(other, last):
                    _report(opt, site, other, other_site, b, last)
                    return


def _stepped_with(opt, b):
    """True when ``opt`` stepped after backward #b with #b in its gradients."""
    for ref, count, counts, _site in _steps:
        if ref() is opt and b in counts and count >= b:
            return True
    return False


def _filled_by(params):
    """The backward numbers that added to these parameters' .grad since their last clear."""
    out = set()
    for p in params:
        rec = _grads.get(p)
        if rec is not None:
            out.update(rec[2])
    return out


def _reached(opt, n):
    """True when backward #n added to a parameter of ``opt``: this optimizer's own loss goes
    through the other model too (a GAN's G loss through D). Without that, the other model is a
    separate head that shares a trunk with this one, and summing the heads' losses into the
    trunk's .grad before its step is the point (one optimizer per head plus one for the trunk)."""
    return n in _filled_by(_params(opt))


def _report(opt, site, other, other_site, b, last):
    bw_site, loss_site = _losses.get(b, (None, None))
    last_site = _losses.get(last, (None, None))[0]
    name, other_name = type(opt).__name__, type(other).__name__
    sites = []
    if bw_site is not None:
        sites.append({"kind": "backward", "site": bw_site,
                      "message": "backward #%d adds this loss's gradient to the parameters of both optimizers" % b})
    if other_site is not None:
        sites.append({"kind": "step", "site": other_site,
                      "message": "%s.step() of the other optimizer used this backward" % other_name})
    if last_site is not None:
        sites.append({"kind": "backward", "site": last_site,
                      "message": "backward #%d adds to the same .grad without a zero_grad in between" % last})
    if site is not None:
        sites.append({"kind": "step", "site": site, "message": "%s.step() updates with the sum of both" % name})
    where = loss_site or bw_site
    _finding(("polluted", tuple(where or ()), tuple(site or ())), code="GW503", kind="polluted-gradients",
             severity="warning", site=where, backward_site=bw_site, sites=sites,
             message="the gradient of this loss (backward #%d, line %s), which %s.step() of another optimizer "
                     "used, is still in the .grad of parameters that %s.step() at line %s updates: backward #%d "
                     "added to it without a zero_grad in between (silently wrong gradients; detach the tensor this "
                     "loss shares with those parameters, or zero their gradients before backward #%d)" % (
                         b, bw_site[1] if bw_site else "?", other_name, name, site[1] if site else "?", last, last))


def install():
    """Remember every optimizer built from now on, and check every step."""
    def note(opt, _seen):
        try:
            _optimizers.add(opt)
        except Exception:  # noqa: BLE001
            pass

    _optwatch.on_build(note)
    _optwatch.on_step(_on_step)
