"""Leaves that require grad, get a gradient from the loss, and that no optimizer can hold: a
module's tensor attribute that is not an ``nn.Parameter`` (GW604), and an ``nn.Parameter`` made
anew at every call of a module's method (GW719).

- **Tensor attribute.** ``self.register_buffer("gain", torch.ones(d, requires_grad=True))`` or
  ``self.gain = torch.ones(d, requires_grad=True)`` in ``__init__``: ``nn.Module`` registers a
  buffer or keeps a plain attribute, never a parameter, so ``model.parameters()`` does not yield
  it and no optimizer built over it holds it. The program's own code made it require grad (it was
  meant to train). The run proves the hazard at optimizer steps after a backward: an optimizer holds
  other parameters of the module, backward gave the tensor a non-zero gradient, no optimizer holds
  it, and its values are still those it was stored with (a tensor the program updates itself, an
  adversarial perturbation stepped by hand, changes: not this) — at two such steps. Shown at the
  store (the static GW604's line).
- **Parameter made per call.** ``scale = nn.Parameter(torch.ones(d))`` in ``forward``: each call
  makes a new leaf, the optimizer (built before) holds none of them, backward fills the new one's
  ``.grad`` and the next call throws it away. Noted when a method of a module whose parameters an
  optimizer holds (not its ``__init__``) makes an ``nn.Parameter`` of a tensor without a graph;
  proven when parameters made at that line got a gradient from two backward calls, none of them
  held by an optimizer nor registered in the module (``self.bias = nn.Parameter(...)`` in forward is
  the late attachment heldgrads.py reports). Shown at the ``nn.Parameter(...)`` call.
"""
import weakref

import torch

from . import optwatch as _optwatch
from . import polluted as _polluted
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor
_MAX_ATTRS = 64
_MAX_NUMEL = 1 << 16  # each is kept as a copy until it is judged
_MAX_FRESH_SITES = 32

# [weakref(owner), name, weakref(tensor), store site, snapshot, steps seen, how ("buffer"/"attribute")]
_attrs = []
# site key -> {"site", "owner": weakref, "bws": set of backward numbers that gave one a gradient, "ids"}
_fresh = {}
_prev_step = weakref.WeakKeyDictionary()


def _held(p):
    for opt in list(_polluted._optimizers):
        if any(q is p for q in _polluted._params(opt)):
            return True
    return False


def _owner_frame(owner, depth):
    """The program's frame storing into ``owner`` when it is one of ``owner``'s own methods."""
    f = _user_frame(_caller(depth))
    if f is None:
        return None
    try:
        if f.f_locals.get("self") is not owner:
            return None
    except Exception:  # noqa: BLE001
        return None
    return f


def _note_attr(owner, name, value, how, depth):
    if len(_attrs) >= _MAX_ATTRS or _state.suspended:
        return
    try:
        if type(value) is not _Tensor or not value.requires_grad or value.grad_fn is not None or \
                value.numel() > _MAX_NUMEL:
            return
        f = _owner_frame(owner, depth + 1)
        # a plain attribute counts when the constructor stores it (a method storing an input that
        # requires grad, for its saliency, is not this); a buffer from any of the module's methods
        if f is None or (how == "attribute" and f.f_code.co_name != "__init__"):
            return
        with torch.no_grad():
            snap = value.detach().clone()
        _attrs.append([weakref.ref(owner), name, weakref.ref(value), _site(f), snap, 0, how])
    except Exception:  # noqa: BLE001
        _internal_error("fresh leaves: attribute")


def _patch_module():
    Module = torch.nn.Module
    orig_buffer = Module.register_buffer

    def register_buffer(self, name, tensor, *args, **kwargs):
        out = orig_buffer(self, name, tensor, *args, **kwargs)
        if isinstance(tensor, _Tensor):
            _note_attr(self, name, tensor, "buffer", 1)
        return out

    register_buffer.__wrapped__ = orig_buffer
    Module.register_buffer = register_buffer

    orig_setattr = Module.__setattr__

    def __setattr__(self, name, value):
        orig_setattr(self, name, value)
        if type(value) is _Tensor and value.requires_grad:
            _note_attr(self, name, value, "attribute", 1)

    __setattr__.__wrapped__ = orig_setattr
    Module.__setattr__ = __setattr__


def note_parameter(param, data, frame):
    """``nn.Parameter(data)`` made at ``frame`` (the caller of ``Parameter.__new__``)."""
    if not _polluted._optimizers or _state.suspended or len(_fresh) >= _MAX_FRESH_SITES:
        return
    try:
        if not isinstance(data, _Tensor) or data.grad_fn is not None or data.requires_grad:
            return
        f = _user_frame(frame)
        if f is None or f.f_code.co_name == "__init__":
            return
        owner = f.f_locals.get("self")
        if not isinstance(owner, torch.nn.Module) or not any(_held(q) for q in owner.parameters()):
            return
        site = _site(f)
        key = tuple(site[:2])
        entry = _fresh.get(key)
        if entry is None:
            entry = _fresh[key] = {"site": site, "owner": weakref.ref(owner), "bws": set(), "done": False}
        if entry["done"]:
            return
        ref = weakref.ref(param)

        def got_grad(p, _entry=entry, _ref=ref):
            try:
                own = _entry["owner"]()
                if own is None or _held(p) or any(q is p for q in own.parameters()):
                    return
                g = p.grad
                if g is not None and bool(g.ne(0).any()):
                    _entry["bws"].add(_state.bw_count)
            except Exception:  # noqa: BLE001
                _internal_error("fresh leaves: gradient")

        param.register_post_accumulate_grad_hook(got_grad)
    except Exception:  # noqa: BLE001
        _internal_error("fresh leaves: parameter")


def _on_step(opt, args, kwargs):
    if _state.suspended:
        return None
    try:
        n = _state.bw_count
        prev = _prev_step.get(opt)
        _prev_step[opt] = n
        if prev == n:
            return None
        params = _polluted._params(opt)
        ids = {id(p) for p in params}
        step_site = _site(_user_frame(_caller(1)))
        if _attrs:
            _check_attrs(opt, ids, step_site)
        if _fresh:
            _check_fresh(opt, ids, step_site)
    except Exception:  # noqa: BLE001
        _internal_error("fresh leaves: step")
    return None


def _sites(opt, step_site, opt_msg, step_msg):
    from .heldgrads import _optimizer_site

    sites = []
    opt_site = _optimizer_site(opt)
    if opt_site is not None:
        sites.append({"kind": "optimizer", "site": opt_site, "message": opt_msg})
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site, "message": step_msg})
    return sites


def _check_attrs(opt, ids, step_site):
    keep = []
    for entry in _attrs:
        owner, name, t = entry[0](), entry[1], entry[2]()
        if owner is None or t is None:
            continue
        try:
            now = owner._buffers.get(name) if name in owner._buffers else owner.__dict__.get(name)
            if now is not t or not t.requires_grad or _held(t):
                continue  # replaced, frozen or held: not this
            keep.append(entry)
            if not any(id(q) in ids for q in owner.parameters()):
                continue  # this optimizer does not train the module
            g = t.grad
            if g is None or not bool(g.ne(0).any()):
                continue
            if t.shape != entry[4].shape or not torch.equal(t.detach(), entry[4]):
                keep.pop()  # the program moves it itself
                continue
            entry[5] += 1
            if entry[5] < 2:
                continue
            keep.pop()
            _report_attr(opt, owner, name, entry[3], entry[6], entry[5], step_site)
        except Exception:  # noqa: BLE001
            _internal_error("fresh leaves: check attribute")
    _attrs[:] = keep


def _report_attr(opt, owner, name, site, how, steps, step_site):
    cls = type(owner).__name__
    kind = "a buffer (`register_buffer`)" if how == "buffer" else "a plain tensor attribute"
    sites = _sites(opt, step_site, "%s is built over `%s.parameters()`, which never yields it" % (
        type(opt).__name__, cls), "%s.step() steps the module's parameters, not this tensor" % type(opt).__name__)
    _finding(("tensor-attribute", tuple(site)), code="GW604", kind="tensor-attribute-not-parameter",
             severity="warning", site=site, sites=sites,
             message="`self.%s` requires grad but is %s of `%s`, not an `nn.Parameter`: `parameters()` never "
                     "yields it and no optimizer holds it; backward gave it a gradient at %d steps and it still has "
                     "the values it was stored with (wrap it in `nn.Parameter`)" % (name, kind, cls, steps))


def _check_fresh(opt, ids, step_site):
    for key, entry in list(_fresh.items()):
        if entry["done"] or len(entry["bws"]) < 2:
            continue
        owner = entry["owner"]()
        if owner is None:
            del _fresh[key]
            continue
        try:
            if not any(id(q) in ids for q in owner.parameters()):
                continue
            entry["done"] = True
            n = len(entry["bws"])
            sites = _sites(opt, step_site, "%s holds the module's parameters, not the ones made per call" % (
                type(opt).__name__), "%s.step() never sees them" % type(opt).__name__)
            _finding(("fresh-parameter", key), code="GW719", kind="untrained-parameter", severity="warning",
                     site=entry["site"], sites=sites,
                     message="a new `nn.Parameter` is made here at every call of `%s.%s`: backward gave %d of them a "
                             "gradient, but no optimizer holds any (%s was built before they existed) and the next "
                             "call replaces it with a fresh one, so it never trains (create it once in `__init__`)" % (
                                 type(owner).__name__, entry["site"][2], n, type(opt).__name__))
        except Exception:  # noqa: BLE001
            _internal_error("fresh leaves: check parameter")


def install():
    _patch_module()
    _optwatch.on_step(_on_step)
