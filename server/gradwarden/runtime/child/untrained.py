"""Parameters an optimizer steps that no backwarded loss trains (GW719).

The run sees every ``optimizer.step()`` and the ``.grad`` each parameter has then. A parameter
that requires grad, whose optimizer steps after a loss was backpropagated, and whose ``.grad``
at every such step is None (or exactly zero) never trains. That alone is not a bug (a module
built but never called, a head whose loss starts after a warm-up), so a finding needs proof
from the run of why no gradient arrives:

- *cut*: a value computed from the parameter left the graph (``.detach()``, ``.data``,
  ``.item()``/``float()``/``.tolist()``/``.numpy()``, re-wrapped as ``nn.Parameter(...)``, or
  computed on under ``no_grad``): the program used the parameter, but only through a copy
  that carries no gradient back. The cut is found by walking, at the cut, the graph of the
  value that leaves it, down to the leaves (bounded: ``_WALK_NODES`` nodes, ``_WALKS_PER_STEP``
  walks between two backward calls, and only while some parameter has not trained yet);
- *zero*: backward reached the parameter, and its gradient was exactly zero at two steps or
  more (the first step of a zero-initialised gate is zero too): an op between the loss and the
  parameter has a zero derivative (``round``, ``floor``, ``sign`` without a straight-through
  estimator). The op is looked for on the next backward's graph.

A ``.grad`` the program changed after backward (clipped, zeroed, set to None: a freeze) is not
counted, a parameter that ever gets a non-zero gradient is forgotten, and programs without an
optimizer are not judged. Findings are made when the run ends.
"""
import weakref

import torch

from . import polluted as _polluted
from .graphtags import _built_sites, _walk
from .paramnames import describe
from .records import _node_name
from .report import _finding, _internal_error, _state
from .tensors import tensor_registry
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor

_WALK_NODES = 5000
_WALKS_PER_STEP = 16
_WALKS_PER_SITE = 4  # a line whose cuts reach no untrained parameter is not walked again
_MAX_TRACKED = 20000  # parameters followed, over all optimizers
_ZERO_STEPS = 2

_ZERO_OPS = frozenset(("RoundBackward0", "RoundBackward1", "FloorBackward0", "CeilBackward0", "TruncBackward0",
                       "SignBackward0", "SgnBackward0", "FracBackward0"))
_NUMBER = frozenset(("item", "tolist", "numpy", "__float__", "__int__", "__index__", "__complex__"))


class _Rec(object):
    __slots__ = ("opt", "none", "zero", "cuts", "zero_ops", "steps")

    def __init__(self, opt):
        self.opt = weakref.ref(opt)
        self.none = self.zero = 0
        self.cuts = []  # [(site, how)]
        self.zero_ops = []  # [(site, node name)]
        self.steps = []  # step sites


_pending = tensor_registry()  # parameter -> _Rec, until it gets a non-zero gradient
_count = [0]
watch = [False]  # read by the mode: cuts are looked for
_opt_sites = weakref.WeakKeyDictionary()  # optimizer -> where it was built
_last_step = weakref.WeakKeyDictionary()  # optimizer -> backward count at its last step
_walks = [0]
_walked = set()
_site_walks = {}  # (code, line) -> walks made from there
_zero_suspects = []


def _update_watch():
    watch[0] = _count[0] > 0 and _walks[0] < _WALKS_PER_STEP


def note_optimizer(opt):
    if _pending is None:
        return
    try:
        site = _site(_user_frame(_caller(2)))
        if site is not None:
            _opt_sites[opt] = site
        for group in opt.param_groups:
            for p in group.get("params", ()):
                if isinstance(p, _Tensor) and p.requires_grad and p.is_leaf and _pending.get(p) is None:
                    if _count[0] >= _MAX_TRACKED:
                        return
                    _pending[p] = _Rec(opt)
                    _count[0] += 1
    except Exception:  # noqa: BLE001
        _internal_error("untrained: optimizer")
    finally:
        _update_watch()


def _forget(p):
    try:
        del _pending[p]
        _count[0] -= 1
    except KeyError:
        pass


def on_step(opt, args, kwargs):
    """Global step pre-hook: the .grad each pending parameter of ``opt`` steps with."""
    if _state.suspended or _pending is None or not _count[0]:
        return None
    try:
        n = _state.bw_count
        if _last_step.get(opt, 0) == n:
            return None  # no loss was backpropagated since this optimizer's last step
        _last_step[opt] = n
        site = _site(_user_frame(_caller(1)))
        for group in opt.param_groups:
            for p in group.get("params", ()):
                rec = _pending.get(p) if isinstance(p, _Tensor) else None
                if rec is None or not p.requires_grad:
                    continue
                g = p.grad
                clean = _clean(p, g)
                if g is not None:
                    with torch._C.DisableTorchFunction():
                        nonzero = bool(g.ne(0).any())
                    if nonzero:
                        _forget(p)
                        continue
                if not clean:
                    continue
                if g is None:
                    rec.none += 1
                else:
                    rec.zero += 1
                    if not rec.zero_ops and len(_zero_suspects) < 64:
                        _zero_suspects.append(p)
                if site is not None and len(rec.steps) < 2 and site not in rec.steps:
                    rec.steps.append(site)
    except Exception:  # noqa: BLE001
        _internal_error("untrained: step")
    finally:
        _update_watch()
    return None


def _clean(p, g):
    """True when ``g`` is what backward left in ``p.grad`` (the program did not clip, zero or
    drop it since)."""
    grads = _polluted._grads
    rec = grads.get(p) if grads is not None else None
    if g is None:
        return rec is None
    if rec is None:
        return False
    state = _polluted._grad_state(p)
    return state is not None and (rec[0], rec[1]) == state


def before_backward(roots):
    """Before a top-level backward: a new step's budget of walks; the zero-derivative ops
    between this loss and the parameters whose gradient was zero."""
    _walks[0] = 0
    _walked.clear()
    _update_watch()
    if not _zero_suspects:
        return
    suspects = list(_zero_suspects)
    del _zero_suspects[:]
    try:
        ids = {id(p) for p in suspects}
        nodes, _, _ = _walk([t.grad_fn for t in roots if t.grad_fn is not None], limit=20000)
        for node in nodes.values():
            name = _node_name(node)
            if name not in _ZERO_OPS:
                continue
            below, _, _ = _walk([node], limit=_WALK_NODES)
            hit = [getattr(n, "variable", None) for n in below.values()]
            built = _built_sites(node)
            if built is None or built[0] is None:
                continue
            for var in hit:
                if var is not None and id(var) in ids:
                    rec = _pending.get(var)
                    if rec is not None and len(rec.zero_ops) < 2:
                        rec.zero_ops.append((built[0], name))
    except Exception:  # noqa: BLE001
        _internal_error("untrained: zero ops")


def cut(t, how, depth=2):
    """``t``'s value leaves the graph here: the pending parameters its graph reaches were used
    through a copy that carries no gradient."""
    node = t.grad_fn
    if node is None or id(node) in _walked or _walks[0] >= _WALKS_PER_STEP:
        return
    try:
        frame = _user_frame(_caller(depth))
        if frame is None:
            return
        where = (frame.f_code, frame.f_lineno)
        if _site_walks.get(where, 0) >= _WALKS_PER_SITE:
            return
        _site_walks[where] = _site_walks.get(where, 0) + 1
        _walks[0] += 1
        _walked.add(id(node))
        _update_watch()
        nodes, _, _ = _walk([node], limit=_WALK_NODES)
        site = None
        for n in nodes.values():
            var = getattr(n, "variable", None)
            if var is None:
                continue
            rec = _pending.get(var)
            if rec is None:
                continue
            if site is None:
                site = _site(frame)
                _site_walks[where] = 0  # this line does cut an untrained parameter: keep looking there
            if len(rec.cuts) < 3 and all(c[0][:2] != site[:2] for c in rec.cuts):
                rec.cuts.append((site, how))
    except Exception:  # noqa: BLE001
        _internal_error("untrained: cut")


_number_kind = {}


def after_call(func, args, out):
    """The mode, for a call that writes nothing, while ``watch`` is on."""
    try:
        if not args or not isinstance(args[0], _Tensor):
            return
        if torch.is_grad_enabled():
            try:
                number = _number_kind.get(func)
            except TypeError:
                return
            if number is None:
                number = _number_kind[func] = (getattr(func, "__name__", "") in _NUMBER)
            if number and args[0].grad_fn is not None:
                cut(args[0], "." + func.__name__.strip("_") + "()", depth=3)
            return
        # under no_grad: a value computed from a graph tensor is a constant
        if isinstance(out, _Tensor) and out.is_floating_point():
            for a in args[:3]:
                if isinstance(a, _Tensor) and a.grad_fn is not None:
                    cut(a, "no_grad", depth=3)
                    return
    except Exception:  # noqa: BLE001
        _internal_error("untrained: call")


def finish():
    """When the run ends: one finding per optimizer and cause."""
    if _pending is None or not _count[0]:
        return
    try:
        groups = {}
        for p, rec in list(_pending.items()):
            opt = rec.opt()
            if opt is None:
                continue
            if rec.zero >= _ZERO_STEPS and not rec.none:
                cause = rec.zero_ops[0] if rec.zero_ops else None
                key = ("zero", id(opt), tuple(cause[0]) if cause else ())
            elif rec.none and rec.cuts and not rec.zero:
                cause = rec.cuts[0]
                key = ("cut", id(opt), tuple(cause[0]))
            else:
                continue
            groups.setdefault(key, (opt, cause, rec, []))[3].append(p)
        for key, (opt, cause, rec, params) in groups.items():
            _report(key[0], opt, cause, rec, params)
    except Exception:  # noqa: BLE001
        _internal_error("untrained: finish")


def _report(kind, opt, cause, rec, params):
    names = []
    modules = []
    for p in params[:5]:
        name, owner, built = describe(p)
        names.append("`%s`" % name if name else "a tensor of shape %s" % (list(p.shape),))
        if built is not None and built not in [m[0] for m in modules]:
            modules.append((built, owner))
    more = " and %d more" % (len(params) - 5) if len(params) > 5 else ""
    opt_name = type(opt).__name__
    opt_site = _opt_sites.get(opt)
    sites = []
    if opt_site is not None:
        sites.append({"kind": "optimizer", "site": opt_site, "message": "%s is given the parameter(s) here" % opt_name})
    for built, owner in modules[:2]:
        sites.append({"kind": "created", "site": built, "message": "the %s holding them is built here" % owner})
    for s in rec.steps[:1]:
        sites.append({"kind": "step", "site": s, "message": "%s.step() finds no gradient" % opt_name})
    what = "%s%s" % (", ".join(names), more)
    one = len(params) == 1
    it, its = ("it", "its") if one else ("they", "their")
    if kind == "zero":
        where = cause[0] if cause else opt_site
        op = _op_of(cause[1]) if cause else None
        why = ("%s gradient is exactly zero at each of the %d steps after a backward: %s" % (
            its, rec.zero, "the derivative of `%s` (line %s) is zero, so nothing flows back through it (a "
                           "straight-through estimator passes the gradient: x + (%s(x) - x).detach())" % (
                               op, cause[0][1], op)
            if cause else "an op between the loss and %s has a zero derivative" % ("it" if one else "them")))
    else:
        site, how = cause
        where = site
        why = ("%s get%s no gradient at any of the %d steps after a backward, and the graph %s enter%s is cut here "
               "(%s): the loss uses %s values through a copy that carries no gradient back" % (
                   it, "s" if one else "", rec.none, it, "s" if one else "", how, its))
    _finding(("untrained", kind, tuple(where or ()), id(opt)), code="GW719", kind="untrained-parameter",
             severity="warning", site=where, sites=sites,
             message="%s, which %s steps, never train%s: %s" % (what, opt_name, "s" if one else "", why))


def _op_of(node_name):
    """``RoundBackward0`` -> ``round``."""
    name = node_name or "op"
    for suffix in ("Backward0", "Backward1"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.lower()


def install():
    """After polluted.install(): note every optimizer built, check every step."""
    Optimizer = torch.optim.Optimizer
    orig = Optimizer.__init__

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        note_optimizer(self)

    __init__.__wrapped__ = orig
    Optimizer.__init__ = __init__
    try:
        from torch.optim.optimizer import register_optimizer_step_pre_hook
    except ImportError:
        return
    register_optimizer_step_pre_hook(on_step)
