"""What an optimizer holds against what the model uses, seen over the steps: a parameter
replaced by a new ``nn.Parameter`` after the optimizer took the old one (GW719), and a zeroing
call that clears only part of what an optimizer steps (GW725).

- **Re-wrapped.** ``layer.weight = nn.Parameter(snapshot)`` registers a new leaf in the module;
  the optimizer still holds the old tensor. The run notes each such replacement of a parameter an
  optimizer holds (``Module.register_parameter`` over a name that held another tensor), and at a
  later step of that optimizer, after a backward, proves the hazard: the old tensor's ``.grad``
  is None (nothing reached it since), the new one's is set, and no optimizer holds the new one.
  A replacement followed by ``add_param_group`` or a new optimizer over it is not this.
- **Attached late.** ``self.head = nn.Linear(...)`` in the first ``forward``, after the optimizer
  was built over the model's parameters: the module (or a bare ``nn.Parameter``) is attached to
  a module whose other parameters an optimizer holds, and its own parameters are held by none.
  At a later step of an optimizer, after a backward, the run proves the hazard: backward gave
  the new parameters a ``.grad`` and still no optimizer holds them (``add_param_group`` or an
  optimizer built over the model afterwards is not this).
- **Partly zeroed.** ``model.zero_grad()`` with an optimizer built over ``[*model.parameters(),
  log_tau]``: at a step, the optimizer's tensors fall in two sets, those whose ``.grad`` a zeroing
  call cleared since the optimizer's previous step, and those whose ``.grad`` still holds
  backward calls from before that step with the new ones added on top (polluted.py follows which
  backward calls added to each ``.grad`` since it was last cleared). The zeroing call that
  cleared the first set and none of the second is the line to change. Gradient accumulation
  (a step every k backward calls, everything zeroed together) never splits the set.
- **Never zeroed** (GW710). At a step, every tensor of the optimizer with a gradient still holds
  backward calls from before its previous step, with new ones on top: nothing cleared them (the
  seq2seq tutorial's two optimizers with `encoder_optimizer.zero_grad()` written twice). Shown
  at a zeroing call that repeats the one before it (the same tensors, no backward between: the
  slip the fix changes), else at the step. Only when the program zeroed other tensors between the
  two steps (a loop that zeroes nothing may mean to accumulate: the static GW710 says so). A
  `.grad` cleared or set outside backward restarts the count, so accumulation over k backward
  calls between zeroed steps is never this.
"""
import weakref

import torch

from . import optwatch as _optwatch
from . import polluted as _polluted
from . import cleared as _cleared
from . import unregistered as _unregistered
from .paramnames import describe, quoted
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _is_user, _site, _user_frame

_Tensor = torch.Tensor
_PLAIN = (list, tuple, dict)

_MAX_REWRAPS = 64
_MAX_ZEROINGS = 16

_MAX_LATE = 64

_late = []  # [[weakrefs of the new parameters], site, attribute name, backward count then, owner class name]
_rewraps = []  # [weakref(old), weakref(new), site, name, backward count then]
_zeroings = []  # (site, frozenset of ids of the tensors it cleared, backward count then)
_prev_step = weakref.WeakKeyDictionary()  # optimizer -> backward count at its previous step


def _held(p):
    """Does an optimizer the run saw hold ``p``?"""
    for opt in list(_polluted._optimizers):
        if any(q is p for q in _polluted._params(opt)):
            return True
    return False


def _patch_register_parameter():
    Module = torch.nn.Module
    orig = Module.register_parameter

    def register_parameter(self, name, param):
        old = None
        try:
            old = self._parameters.get(name) if "_parameters" in self.__dict__ else None
        except Exception:  # noqa: BLE001
            old = None
        orig(self, name, param)
        if old is None or param is None or old is param or len(_rewraps) >= _MAX_REWRAPS:
            return
        try:
            if old.requires_grad and _held(old):
                site = _site(_user_frame(_caller(1)))
                if site is not None:
                    _rewraps.append([weakref.ref(old), weakref.ref(param), site, name, _state.bw_count])
        except Exception:  # noqa: BLE001
            _internal_error("held grads: register_parameter")

    register_parameter.__wrapped__ = orig
    Module.register_parameter = register_parameter


def _patch_setattr():
    """A module or parameter attached to a module whose parameters an optimizer already holds."""
    Module = torch.nn.Module
    orig = Module.__setattr__

    def __setattr__(self, name, value):
        orig(self, name, value)
        if type(value) in _PLAIN and not _state.suspended:
            f = _user_frame(_caller(1))
            if f is not None and f.f_locals.get("self") is self:
                _unregistered.note_store(self, name, value, _site(f))
        _note_late(self, name, value)

    __setattr__.__wrapped__ = orig
    Module.__setattr__ = __setattr__


def _patch_add_module():
    """``add_module``/``register_module`` (what ``ModuleDict.update``, ``ModuleDict[key] = m`` and
    ``Sequential.append`` call) store into ``_modules`` without ``__setattr__``."""
    Module = torch.nn.Module
    orig = Module.add_module

    def add_module(self, name, module):
        orig(self, name, module)
        _note_late(self, name, module)

    add_module.__wrapped__ = orig
    Module.add_module = add_module


def _note_late(self, name, value):
    """``value`` was stored into module ``self`` under ``name``: a module or parameter attached to
    a module whose other parameters an optimizer already holds, itself held by none."""
    Module = torch.nn.Module
    Parameter = torch.nn.Parameter
    if not _polluted._optimizers or _state.suspended or not isinstance(value, (Module, Parameter)) or \
            len(_late) >= _MAX_LATE:
        return
    try:
        new = [value] if isinstance(value, Parameter) else list(value.parameters())
        new = [p for p in new if p.requires_grad and not _held(p)]
        if not new:
            return
        ids = {id(p) for p in new}
        owner = self
        if not any(_held(q) for q in self.parameters() if id(q) not in ids):
            # an item of a container (`self.biases[key] = nn.Parameter(...)` into an
            # `nn.ParameterDict`, `ParameterList.append`, a `ModuleDict`): the module of the
            # program's code that holds the container, when an optimizer holds its other parameters
            owner = _enclosing(self, ids)
            if owner is None:
                return  # a module no optimizer trains yet (being built, or trained by none)
        site = _site(_user_frame(_caller(2)))
        if site is not None:
            what = name if owner is self else "%s[%r]" % (
                next((n for n, m in owner.named_modules() if m is self), "") or type(self).__name__, name)
            _late.append([[weakref.ref(p) for p in new], site, what, _state.bw_count, type(owner).__name__])
    except Exception:  # noqa: BLE001
        _internal_error("held grads: attach")


def _enclosing(container, ids, depth=6):
    """The module whose method is running in the program's frames (its ``self``) and that contains
    ``container``, when an optimizer holds some of its parameters other than ``ids``; else None."""
    f = _caller(2)
    while f is not None and depth > 0:
        if _is_user(f.f_code.co_filename):
            depth -= 1
            me = f.f_locals.get("self") if "self" in f.f_code.co_varnames else None
            if isinstance(me, torch.nn.Module) and me is not container:
                if any(m is container for m in me.modules()) and \
                        any(_held(q) for q in me.parameters() if id(q) not in ids):
                    return me
        f = f.f_back
    return None


def _patch_zero_grad():
    """Where each zeroing call ran and what it cleared (a module's, or an optimizer's)."""
    for cls, params in ((torch.nn.Module, lambda self: list(self.parameters())),
                        (torch.optim.Optimizer, _polluted._params)):
        orig = cls.zero_grad

        def zero_grad(self, *args, _orig=orig, _params=params, **kwargs):
            had = False
            if _polluted._optimizers and not _state.suspended and _state.bw_count:
                try:
                    had = any(p.grad is not None for p in _params(self))
                except Exception:  # noqa: BLE001
                    had = False
            out = _orig(self, *args, **kwargs)
            try:
                if _polluted._optimizers and not _state.suspended:
                    site = _site(_user_frame(_caller(1)))
                    if site is not None:
                        ids = frozenset(id(p) for p in _params(self))
                        _zeroings.append((site, ids, _state.bw_count))
                        del _zeroings[:-_MAX_ZEROINGS]
                        if had:
                            _cleared.note(site, ids, _state.bw_count, _state.last_bw_site)
            except Exception:  # noqa: BLE001
                _internal_error("held grads: zero_grad")
            return out

        zero_grad.__wrapped__ = orig
        cls.zero_grad = zero_grad


def _note_zeroing(site, ids):
    """A zeroing of the tensors ``ids`` at ``site``: the clears made from one line between two
    backward calls (a loop) are one zeroing call."""
    n = _state.bw_count
    last = _zeroings[-1] if _zeroings else None
    if last is not None and last[0] == site and last[2] == n:
        _zeroings[-1] = (site, last[1] | frozenset(ids), n)
    else:
        _zeroings.append((site, frozenset(ids), n))
        del _zeroings[:-_MAX_ZEROINGS]


_grad_owners = [None, -1]  # {data_ptr of an optimizer tensor's .grad: the tensor}, backward count then


def grads_zeroed(targets):
    """The mode, for ``zero_`` / ``_foreach_zero_`` called by the program itself: zeros written into
    the ``.grad`` of tensors an optimizer holds (``p.grad.zero_()``, ``p.grad.data.zero_()`` in a
    loop: the hand-written ``zero_grad(set_to_none=False)``) are a zeroing call like ``p.grad = None``.
    Matched by memory (``.data`` of a gradient is another tensor object over the same storage);
    ``zero_grad`` itself, which calls them from torch's code, is noted by its own wrapper."""
    if not _polluted._optimizers or _state.suspended:
        return
    try:
        f = _caller(2)
        if f is None or not _is_user(f.f_code.co_filename):
            return
        owners = _grad_owners[0]
        if owners is None or _grad_owners[1] != _state.bw_count:
            owners = {}
            for p in _polluted._all_params() or ():
                g = p.grad
                if g is not None and g.numel():
                    owners[g.data_ptr()] = p
            _grad_owners[0], _grad_owners[1] = owners, _state.bw_count
        ids = []
        for t in targets:
            if isinstance(t, _Tensor) and t.numel():
                p = owners.get(t.data_ptr())
                if p is not None and p.grad is not None and p.grad.data_ptr() == t.data_ptr():
                    ids.append(id(p))
        if ids:
            _note_zeroing(_site(f), ids)
    except Exception:  # noqa: BLE001
        _internal_error("held grads: zero_")


def _patch_grad_setter():
    """``p.grad = None`` written by the program (a loop over one module's parameters instead of
    ``zero_grad()``) is a zeroing call too: the assignments made from one line between two backward
    calls are one zeroing, with every tensor they cleared (the getter is torch's own)."""
    base = torch._C.TensorBase.grad

    def _set(self, value):
        base.__set__(self, value)
        if value is not None or not _polluted._optimizers or _state.suspended:
            return
        try:
            f = _user_frame(_caller(1))
            if f is None:
                return
            _note_zeroing(_site(f), (id(self),))
        except Exception:  # noqa: BLE001
            _internal_error("held grads: grad setter")

    torch.Tensor.grad = property(base.__get__, _set, base.__delete__, doc=getattr(base, "__doc__", None))


def _on_step(opt, args, kwargs):
    if _state.suspended:
        return None
    try:
        n = _state.bw_count
        if _cleared._pending:
            _cleared.resolve(n, _state.last_bw_site)
        prev = _prev_step.get(opt)
        _prev_step[opt] = n
        if prev is None or prev == n:
            return None  # a first step, or no backward since the last one
        site = _site(_user_frame(_caller(1)))
        params = _polluted._params(opt)
        if _rewraps:
            _check_rewraps(opt, params, site)
        if _late:
            _check_late(opt, site)
        if _unregistered._stores:
            _unregistered.check(opt, site, _held, _optimizer_site(opt))
        if _zeroings and _polluted._grads is not None:
            _check_partial_zeroing(opt, params, prev, site)
        if _polluted._grads is not None:
            _check_never_zeroed(opt, params, prev, site)
        if _cleared._discards:
            _cleared.check(opt, params, n, site, _optimizer_site(opt))
    except Exception:  # noqa: BLE001
        _internal_error("held grads: step")
    return None


def _check_rewraps(opt, params, step_site):
    keep = []
    for entry in _rewraps:
        old, new, site, name, then = entry[0](), entry[1](), entry[2], entry[3], entry[4]
        if old is None or new is None:
            continue
        if not any(p is old for p in params) or _state.bw_count == then:
            keep.append(entry)
            continue
        if old.grad is not None or new.grad is None or _held(new):
            continue  # the old tensor still trains, or the new one is stepped too: not this
        pname, owner, _made = describe(new)
        sites = []
        opt_site = _optimizer_site(opt)
        if opt_site is not None:
            sites.append({"kind": "optimizer", "site": opt_site,
                          "message": "%s is given the tensor the module held then" % type(opt).__name__})
        if step_site is not None:
            sites.append({"kind": "step", "site": step_site,
                          "message": "%s.step() finds no gradient on the tensor it holds" % type(opt).__name__})
        what = "`%s`" % pname if pname else "`%s`" % name
        _finding(("rewrapped", tuple(site), id(opt)), code="GW719", kind="untrained-parameter", severity="warning",
                 site=site, sites=sites,
                 message="%s is replaced here by a new `nn.Parameter` after %s was built over the old one: backward "
                         "now fills the new tensor, which no optimizer holds, and the old one gets no gradient at the "
                         "steps after it (update the existing parameter in place: `.data.copy_(...)` under no_grad, "
                         "or give the optimizer the new one)" % (what, type(opt).__name__))
    _rewraps[:] = keep


def _check_late(opt, step_site):
    keep = []
    for entry in _late:
        new = [r() for r in entry[0]]
        new = [p for p in new if p is not None]
        site, name, then, owner = entry[1], entry[2], entry[3], entry[4]
        if not new:
            continue
        if _state.bw_count == then:
            keep.append(entry)
            continue
        if any(_held(p) for p in new):
            continue  # handed to an optimizer since: it trains
        got = [p for p in new if p.grad is not None]
        if not got:
            keep.append(entry)  # not used by a loss yet
            continue
        names, more = _named(got)
        sites = []
        opt_site = _optimizer_site(opt)
        if opt_site is not None:
            sites.append({"kind": "optimizer", "site": opt_site,
                          "message": "%s was built before `%s` existed" % (type(opt).__name__, name)})
        if step_site is not None:
            sites.append({"kind": "step", "site": step_site,
                          "message": "%s.step() steps the other parameters, not these" % type(opt).__name__})
        _finding(("attached-late", tuple(site)), code="GW719", kind="untrained-parameter", severity="warning",
                 site=site, sites=sites,
                 message="`%s` is attached to the %s here after %s was built over its other parameters: backward "
                         "gives %s%s a gradient, but no optimizer holds %s, so the steps never apply it (build "
                         "the module before the optimizer, or add it with `add_param_group`)" % (
                             name, owner, type(opt).__name__, ", ".join(names), more,
                             "it" if len(got) == 1 else "them"))
    _late[:] = keep


def _named(params):
    """The names of the first three of ``params`` (a shape where a tensor has none) and the
    " and N more" that follows them in a message."""
    names = []
    for p in params[:3]:
        pname, _owner, _made = describe(p)
        names.append(quoted(p, pname))
    return names, (" and %d more" % (len(params) - 3) if len(params) > 3 else "")


def _optimizer_site(opt):
    try:
        from . import untrained as _untrained
        return _untrained._opt_sites.get(opt)
    except Exception:  # noqa: BLE001
        return None


def _check_partial_zeroing(opt, params, prev, step_site):
    grads = _polluted._grads
    fresh, stale = [], []
    for p in params:
        rec = grads.get(p)
        if rec is None or not rec[2]:
            continue
        added = rec[2]
        if added[0] > prev:
            fresh.append(p)
        elif added[-1] > prev:
            stale.append(p)  # still holds backward calls from before the last step, new ones on top
    if not fresh or not stale:
        return
    fresh_ids, stale_ids = {id(p) for p in fresh}, {id(p) for p in stale}
    for site, cleared, then in reversed(_zeroings):
        if then < prev:
            break
        if cleared & fresh_ids and not cleared & stale_ids:
            names, more = _named(stale)
            sites = []
            if step_site is not None:
                sites.append({"kind": "step", "site": step_site,
                              "message": "%s.step() uses the accumulated gradient" % type(opt).__name__})
            _finding(("partial-zero", tuple(site), id(opt)), code="GW725", kind="partial-zero-grad",
                     severity="warning", site=site, sites=sites,
                     message="this call clears the gradients of %d of the tensors %s steps but not of %s%s: %s keep%s "
                             "the gradients of the earlier steps and the next backward adds to them (zero every "
                             "tensor the optimizer holds: `optimizer.zero_grad()`)" % (
                                 len(fresh), type(opt).__name__, ", ".join(names), more,
                                 "it" if len(stale) == 1 else "they", "s" if len(stale) == 1 else ""))
            return


def _check_never_zeroed(opt, params, prev, step_site):
    """Every tensor of ``opt`` with a gradient holds backward calls from before its previous step
    (at ``prev``) and new ones: its gradients were never cleared between the two steps."""
    grads = _polluted._grads
    stale = 0
    for p in params:
        rec = grads.get(p)
        if rec is None or not rec[2]:
            continue
        added = rec[2]
        if added[0] > prev or added[-1] <= prev:
            return  # cleared since the previous step, or nothing new: not this
        stale += 1
    if not stale:
        return
    ids = {id(p) for p in params}
    site, how = step_site, None
    last = None
    zeroed = False
    for z_site, cleared, then in _zeroings:
        if then < prev:
            last = None
            continue
        zeroed = True
        if last is not None and last[1] == cleared and last[2] == then and not cleared & ids and z_site != last[0]:
            site, how = z_site, last[0]  # the same tensors cleared again, nothing in between
        last = (z_site, cleared, then)
    if not zeroed:
        return  # the program zeroes nothing between the steps: whether it means to accumulate is its intent
    name = type(opt).__name__
    sites = []
    opt_site = _optimizer_site(opt)
    if opt_site is not None:
        sites.append({"kind": "optimizer", "site": opt_site, "message": "%s is built here" % name})
    if step_site is not None and step_site != site:
        sites.append({"kind": "step", "site": step_site, "message": "%s.step() uses the accumulated gradient" % name})
    if how is not None:
        sites.append({"kind": "note", "site": how, "message": "the same tensors were just cleared here"})
        why = ("this zeroing call repeats the one at line %s (the same tensors, no backward in between), and nothing "
               "clears the gradients of the tensors %s steps: " % (how[1], name))
    else:
        why = "nothing clears the gradients of the tensors %s steps between two of its steps: " % name
    _finding(("never-zeroed", id(opt)), code="GW710", kind="gradients-never-zeroed", severity="warning", site=site,
             sites=sites,
             message=why + "each backward adds to what the earlier steps left, and the step applies the sum (zero "
                           "them before each backward: `%s.zero_grad()`)" % (_opt_name(opt) or "optimizer"))


def _opt_name(opt):
    """The name the frame of the user's code that steps gives the optimizer, else None."""
    f = _user_frame(_caller(3))
    try:
        for k, v in (f.f_locals.items() if f is not None else ()):
            if v is opt and not k.startswith("_") and k != "self":
                return k
    except Exception:  # noqa: BLE001
        pass
    return None


def install():
    """After polluted.install() and untrained.install() (their records are read here)."""
    _patch_register_parameter()
    _patch_setattr()
    _patch_add_module()
    _patch_zero_grad()
    _patch_grad_setter()
    _optwatch.on_step(_on_step)
