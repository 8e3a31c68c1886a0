"""An optimizer over a model instance that the program then re-created (GW719, at the new one).

``optimizer = SGD(model.parameters())`` followed by ``model = Model(...)``: the loss goes through
the new instance, whose parameters get gradients that no optimizer holds, while the optimizer
steps the old instance's parameters, which never get one. The run proves that pairing, and only
that: at an optimizer step that follows a backward,

- none of the optimizer's parameters that require grad has a gradient (no backward ever reached
  them: a later step that finds one forgets it);
- they belong to one module instance (the outermost module the run built that holds them),
  and another instance of the same class, built by the program, has parameters that backward
  just reached and that no optimizer holds.

A feature extractor left outside the optimizer, an EMA teacher, a target network are other
classes or get no gradient; two towers of one class each have their optimizer. Reported when the
run ends, at the line that built the instance the loss uses (the static finding's line, where the
fix moves the optimizer below), with the optimizer and the old instance as related sites.
"""
import weakref

import torch

from . import optwatch as _optwatch
from . import untrained as _untrained
from .records import _mod_callers, _mod_sites
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _site, _user_frame

_MAX_CHECKS = 4  # steps of one optimizer looked at while its parameters have no gradient
_seen = weakref.WeakKeyDictionary()  # optimizer -> steps checked (None: it got a gradient: done)
_last = weakref.WeakKeyDictionary()  # optimizer -> backward count at its last step
_found = weakref.WeakKeyDictionary()  # optimizer -> ((new instance's site, its class name), step site)
# id(optimizer) -> (its class name, its construction site, names, count, step site) of parameters the
# backward reached that no optimizer holds, while none of this optimizer's has a gradient (see
# _note_strays); by id, for the optimizer may be gone when the run ends (a script's globals)
_strays = {}
# optimizer -> (class, construction site) of the module instance whose parameters it was given:
# taken when the optimizer is built, for the instance itself may be gone by the first step (the
# name that held it was rebound, and only the optimizer keeps its parameters alive)
_owner = weakref.WeakKeyDictionary()
# optimizer -> the modules alive when it was built (one built later that holds the parameters the
# loss trains is where the model was re-created)
_before = weakref.WeakKeyDictionary()
_MAX_MODULES = 4000  # modules looked at when an optimizer is built
# optimizers noted (the owner search walks every module): the first ones of a run are those a
# rebinding can leave behind; a program that builds one per step (an inner loop) stops paying
_MAX_NOTED = 16
_noted = [0]


def _trainable(opt):
    return [p for g in opt.param_groups for p in g.get("params", ())
            if isinstance(p, torch.Tensor) and p.requires_grad]


def _held_by_any():
    """ids of every parameter an optimizer the run saw holds."""
    from .untrained import _opt_sites

    out = set()
    for opt in list(_opt_sites.keys()):
        for p in _trainable(opt):
            out.add(id(p))
    return out


def _instance_of(params, modules):
    """The outermost module that holds every one of ``params``, or None."""
    want = {id(p) for p in params}
    best = None
    for m in modules:
        ids = {id(p) for p in m.parameters()}
        if want <= ids and (best is None or len(ids) > best[0]):
            best = (len(ids), m)
    return best[1] if best else None


def on_step(opt, args, kwargs):
    """Global step pre-hook."""
    if _state.suspended or _mod_sites is None:
        return None
    try:
        state = _seen.get(opt, 0)
        if state is None:
            return None
        n = _state.bw_count
        if n == 0 or _last.get(opt) == n:
            return None
        _last[opt] = n
        params = _trainable(opt)
        if not params or any(p.grad is not None for p in params):
            _seen[opt] = None
            _found.pop(opt, None)
            _strays.pop(id(opt), None)
            return None
        if opt in _found or state >= _MAX_CHECKS:
            return None
        _seen[opt] = state + 1
        owner = _owner.get(opt)
        if owner is None:
            _note_strays(opt, params)
            return None
        cls = owner[0]
        held = None
        for m in list(_mod_sites.keys()):
            if type(m) is not cls:
                continue
            mine = [p for p in m.parameters() if p.requires_grad]
            if not mine or not any(p.grad is not None for p in mine):
                continue
            if held is None:
                held = _held_by_any()
            if any(id(p) in held for p in mine):
                continue
            if any(id(p) in {id(q) for q in params} for p in mine):
                continue
            if m in owner[2]:
                continue  # built before the optimizer: not a re-created instance
            # its site and class now: the instance may be freed before the run ends (a script's globals)
            _found[opt] = ((_shown_site(m, opt), type(m).__name__), _site(_user_frame(_caller(1))))
            _untrained.superseded.add(opt)
            break
        else:
            _note_strays(opt, params)
    except Exception:  # noqa: BLE001
        _internal_error("stale optimizer: step")
    return None


def _shown_site(module, opt):
    """Where ``module`` was built, as the line to change: when a factory of the program built it
    (``model = build_model(state)``), the call made by the function that also built the optimizer."""
    built = _mod_sites.get(module)
    opt_site = _untrained._opt_sites.get(opt)
    if built is None or opt_site is None or list(built[::2]) == list(opt_site[::2]):
        return built
    for site in _mod_callers.get(module, ()):
        if site is not None and list(site[::2]) == list(opt_site[::2]):
            return site
    return built


def _note_strays(opt, params):
    """None of the optimizer's parameters has a gradient at this step, and no re-created instance of
    its model explains it: the backward just gave gradients to parameters of modules the run built
    that no optimizer holds (the optimizer was built over a deep copy of the model, or over a list
    taken before a module was replaced). Counted for every checked step; reported when the run ends
    if no step of this optimizer ever found a gradient."""
    held = None
    mine = {id(p) for p in params}
    strays = {}
    tensors = []
    modules = list(_mod_sites.keys())
    for m in modules:
        for name, p in m.named_parameters(recurse=False):
            if p.grad is None or not p.requires_grad or id(p) in mine or id(p) in strays:
                continue
            if held is None:
                held = _held_by_any()
            if id(p) not in held:
                strays[id(p)] = "%s.%s" % (type(m).__name__, name)
                tensors.append(p)
    from .untrained import _opt_sites

    opt_site = _opt_sites.get(opt)
    if strays and opt_site is not None and id(opt) not in _strays:
        # every stray parameter in one instance the program built after the optimizer (`model =
        # OtherModel(...)` rebinding the name): that construction is the line to change
        before = _before.get(opt)
        new = _instance_of(tensors, modules) if before is not None and len(modules) <= _MAX_MODULES else None
        built = _shown_site(new, opt) if new is not None and new not in before else None
        if built is not None:
            _untrained.superseded.add(opt)
        _strays[id(opt)] = (type(opt).__name__, opt_site, sorted(set(strays.values())), len(strays),
                            _site(_user_frame(_caller(2))), built and (built, type(new).__name__))


def finish():
    """When the run ends: the optimizers whose parameters never got a gradient while a re-created
    instance of their model trained without one."""
    from .untrained import _opt_sites

    try:
        for opt, ((built, name), step_site) in list(_found.items()):
            if built is None or _seen.get(opt, 0) is None:
                continue
            sites = []
            opt_site = _opt_sites.get(opt)
            if opt_site is not None:
                sites.append({"kind": "optimizer", "site": opt_site,
                              "message": "%s is given the parameters of another %s here" % (type(opt).__name__, name)})
            old_site = _owner[opt][1] if opt in _owner else None
            if old_site is not None:
                sites.append({"kind": "created", "site": old_site,
                              "message": "the %s whose parameters the optimizer holds is built here" % name})
            if step_site is not None:
                sites.append({"kind": "step", "site": step_site,
                              "message": "%s.step() finds no gradient" % type(opt).__name__})
            _finding(("stale-optimizer", tuple(built), id(opt)), code="GW719", kind="untrained-parameter",
                     severity="warning", site=built, sites=sites,
                     message="the loss goes through the %s built here, whose parameters get gradients that no "
                             "optimizer holds, while %s steps the parameters of another %s, which never get one: "
                             "build the optimizer after this instance (or over it)" % (name, type(opt).__name__, name))
        for key, (kind, opt_site, names, count, step_site, new) in list(_strays.items()):
            shown = ", ".join(names[:3]) + (" and %d more" % (len(names) - 3) if len(names) > 3 else "")
            sites = []
            if step_site is not None:
                sites.append({"kind": "step", "site": step_site,
                              "message": "%s.step() finds no gradient" % kind})
            if new is not None:
                built, name = new
                sites.append({"kind": "optimizer", "site": opt_site,
                              "message": "%s is given other parameters here" % kind})
                _finding(("stale-optimizer", tuple(built), key), code="GW719", kind="untrained-parameter",
                         severity="warning", site=built, sites=sites,
                         message="the loss goes through the %s built here, after %s was built over other "
                                 "parameters: its %d parameter(s) (%s) get gradients that no optimizer holds, while "
                                 "the optimizer's parameters never get one; build the optimizer after this instance "
                                 "(or over it)" % (name, kind, count, shown))
                continue
            _finding(("stray-parameters", tuple(opt_site), key), code="GW719", kind="untrained-parameter",
                     severity="warning", site=opt_site, sites=sites,
                     message="%s built here holds parameters that no backward ever reached, while the loss gave "
                             "gradients to %d parameter(s) (%s) that no optimizer holds: it holds other tensors than "
                             "the ones the model uses (a copy of the model, or parameters of a module replaced "
                             "since); build it over the parameters the model uses" % (kind, count, shown))
    except Exception:  # noqa: BLE001
        _internal_error("stale optimizer: finish")


def note_optimizer(opt):
    """When an optimizer is built: the class and construction site of the instance it trains."""
    if _mod_sites is None or _noted[0] >= _MAX_NOTED:
        return
    _noted[0] += 1
    try:
        params = _trainable(opt)
        modules = list(_mod_sites.keys())
        if not params or len(modules) > _MAX_MODULES:
            return
        _before[opt] = weakref.WeakSet(modules)
        m = _instance_of(params, modules)
        if m is not None:
            # the instances of that class alive now: one of them is not re-created after the optimizer
            # (a list taken before a swap made before it is a stray, reported at the optimizer)
            # (weakly: a freed instance's id is reused by the next one, `model = copy.deepcopy(model)`)
            _owner[opt] = (type(m), _mod_sites.get(m), weakref.WeakSet(x for x in modules if type(x) is type(m)))
    except Exception:  # noqa: BLE001
        _internal_error("stale optimizer: optimizer")


def install():
    """After untrained.install(), whose Optimizer.__init__ this one wraps."""
    _optwatch.on_build(lambda opt, _seen: note_optimizer(opt))
    _optwatch.on_step(on_step)
