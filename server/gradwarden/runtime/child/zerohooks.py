"""A gradient hook of the program's that returns zeros (GW742, the static rule's code).

``p.register_hook(lambda g: torch.zeros_like(g))`` (or ``g * 0``), a debugging hook left on a
parameter: the hook's return value replaces the gradient, so the parameter's ``.grad`` is all zeros
at every backward and the optimizer never moves it (momentum and weight decay aside). The same hook
on an activation (``h.register_hook(...)`` in ``forward``) zeroes the gradient of every parameter
below it that no other path reaches.

Proven without intent: the hook was given a gradient with a non-zero element and returned one
whose elements are all zero, at every call the run saw (a hook that scales, masks part of the
gradient, or clips returns something non-zero at some call: not this; a gradient-reversal
coefficient that starts at 0 and grows is not this once it grows), at two backward calls or more;
and at an optimizer step after such a backward, parameters it holds — the hooked tensor itself, or
leaves below the hooked activation — have a gradient that is exactly zero everywhere. Shown at the
``register_hook`` call.
"""
import weakref

import torch

from . import optwatch as _optwatch
from . import polluted as _polluted
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _is_user, _site, _user_frame

_Tensor = torch.Tensor
_MAX_SITES = 32
_MAX_NODES = 2000

# site key -> {"site", "bws": backward numbers it zeroed at, "live": it returned non-zero once,
#              "leaves": weakrefs of the hooked leaf / the leaves below the hooked activation, "done"}
_sites = {}
_prev_step = weakref.WeakKeyDictionary()


def _leaves_below(t):
    """Leaf tensors the graph of ``t`` reaches (bounded)."""
    out, seen, todo = [], set(), [t.grad_fn]
    while todo and len(seen) < _MAX_NODES:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if isinstance(var, _Tensor):
            out.append(var)
            continue
        todo.extend(nf[0] for nf in node.next_functions)
    return out


def _wrap(hook, entry):
    def zero_watch(grad):
        out = hook(grad)
        if entry["live"] or entry["done"] or _state.suspended:
            return out
        try:
            if isinstance(out, _Tensor) and isinstance(grad, _Tensor) and not out.is_sparse and \
                    out.shape == grad.shape:
                if bool(out.ne(0).any()):
                    entry["live"] = True
                elif bool(grad.ne(0).any()):
                    entry["bws"].add(_state.bw_count)
            elif out is not None:
                entry["live"] = True
        except Exception:  # noqa: BLE001
            _internal_error("zero hooks: call")
        return out

    zero_watch.__wrapped__ = hook
    return zero_watch


def _patch_register_hook():
    orig = _Tensor.register_hook

    def register_hook(self, hook):
        if _state.suspended or not callable(hook):
            return orig(self, hook)
        code = getattr(hook, "__code__", None)
        if code is None or not _is_user(code.co_filename) or not self.requires_grad:
            return orig(self, hook)
        try:
            site = _site(_user_frame(_caller(1)))
            if site is None:
                return orig(self, hook)
            key = tuple(site[:2])
            entry = _sites.get(key)
            if entry is None:
                if len(_sites) >= _MAX_SITES:
                    return orig(self, hook)
                entry = _sites[key] = {"site": site, "bws": set(), "live": False, "leaves": [], "done": False}
            if entry["live"] or entry["done"]:
                return orig(self, hook)
            leaves = [self] if self.grad_fn is None else _leaves_below(self)
            known = {id(r()) for r in entry["leaves"]}
            entry["leaves"].extend(weakref.ref(p) for p in leaves if id(p) not in known)
            del entry["leaves"][:-256]
            return orig(self, _wrap(hook, entry))
        except Exception:  # noqa: BLE001
            _internal_error("zero hooks: register")
            return orig(self, hook)

    register_hook.__wrapped__ = orig
    _Tensor.register_hook = register_hook


def _on_step(opt, args, kwargs):
    if _state.suspended or not _sites:
        return None
    try:
        n = _state.bw_count
        prev = _prev_step.get(opt)
        _prev_step[opt] = n
        if prev == n:
            return None
        params = _polluted._params(opt)
        ids = {id(p) for p in params}
        for key, entry in list(_sites.items()):
            if entry["done"] or entry["live"] or len(entry["bws"]) < 2 or n not in entry["bws"]:
                continue
            zeroed = []
            for r in entry["leaves"]:
                p = r()
                if p is None or id(p) not in ids:
                    continue
                g = p.grad
                if g is None or g.is_sparse or bool(g.ne(0).any()):
                    continue
                zeroed.append(p)
            if not zeroed:
                continue
            entry["done"] = True
            _report(opt, entry, zeroed)
    except Exception:  # noqa: BLE001
        _internal_error("zero hooks: step")
    return None


def _report(opt, entry, zeroed):
    from .heldgrads import _optimizer_site
    from .paramnames import describe

    names = []
    for p in zeroed[:3]:
        name = describe(p)[0]
        names.append("`%s`" % name if name else "a %s tensor" % "x".join(str(d) for d in p.shape))
    more = " and %d more" % (len(zeroed) - 3) if len(zeroed) > 3 else ""
    sites = []
    opt_site = _optimizer_site(opt)
    if opt_site is not None:
        sites.append({"kind": "optimizer", "site": opt_site, "message": "%s holds them" % type(opt).__name__})
    step = _site(_user_frame(_caller(1)))
    if step is not None:
        sites.append({"kind": "step", "site": step, "message": "%s.step() finds an all-zero gradient" % type(opt).__name__})
    _finding(("zero-hook", tuple(entry["site"][:2])), code="GW742", kind="gradient-hook-returns-zero",
             severity="warning", site=entry["site"], sites=sites,
             message="the gradient hook registered here returns zeros at every backward (%d calls, each given a "
                     "non-zero gradient): its return value replaces the gradient, so the gradient of %s%s is all zero and "
                     "the optimizer never trains it (remove the hook, or return None from it to keep the gradient)"
                     % (len(entry["bws"]), ", ".join(names), more))


def install():
    _patch_register_hook()
    _optwatch.on_step(_on_step)
