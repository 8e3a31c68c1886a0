"""A sample drawn with ``sample()`` where the loss differentiates through it (GW722, at the draw).

``z = Normal(mu, std).sample()`` is drawn under ``no_grad``: ``z`` carries no path back to ``mu``
and ``std``. Fed to a decoder whose output is part of the loss, the loss depends on the draw but
its gradient never reaches the distribution's parameters through it: the reparameterised draw
``rsample()`` was meant (a VAE whose encoder trains on the KL term only, a stochastic actor scored
by a critic). Nothing raises and every parameter may still get a gradient from other terms.

The run proves it without an oracle when all of these hold:

- ``sample()`` of a distribution that has ``rsample`` (``has_rsample``) and was built from tensors
  that require grad, with grad mode on;
- the draw (or a value computed from it without a graph) is taken in by a call of the program's
  that builds a node: a computation of the loss on the draw, not the distribution's own
  ``log_prob``/``entropy`` (made in torch.distributions' code: REINFORCE scores its sample there);
- a backward goes through such a node, and the same backward reaches the distribution's parameter
  tensors by another path (the loss differentiates the distribution, but not through the draw).

A draw fed to a network trained by a loss that never touches the distribution (a critic's own
loss on sampled actions) is not this.
"""
import sys
import weakref

import torch

from .graphtags import _walk
from .report import _finding, _internal_error, _state
from .tensors import tensor_registry
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor
_MARK = "_gradwarden_sample"  # node.metadata key: the _Draw whose value the node was built from
_MAX_DRAWS = 64

_draws = tensor_registry()  # a draw, or a value computed from it without graph -> _Draw
taint = [False]  # read by the mode: some draw is alive
_marked = [0]  # nodes marked (a backward may go through them)
_idle = [0]  # backward calls since one went through a marked node
_MAX_IDLE = 8
_depth = [0]
_reported = set()


class _Draw(object):
    __slots__ = ("site", "params")

    def __init__(self, site, params):
        self.site = site
        self.params = params  # the distribution's tensors that require grad (kept until the draw dies)


# distribution -> the tensors that require grad its constructor was given (a constructor may
# store a function of them instead: ``MultivariateNormal`` keeps ``loc.expand(...)``,
# ``RelaxedOneHotCategorical`` normalised logits, nodes a loss on the given tensors never goes through)
_given = weakref.WeakKeyDictionary()


def _dist_tensors(dist, depth=0):
    out = list(_given.get(dist, ())) if depth == 0 else []
    for v in list(vars(dist).values())[:32]:
        if isinstance(v, _Tensor) and v.requires_grad:
            if all(v is not x for x in out):
                out.append(v)
        elif depth < 2 and isinstance(v, torch.distributions.Distribution):
            out.extend(_dist_tensors(v, depth + 1))
    return out


def _after_sample(dist, out):
    if _state.suspended or not torch.is_grad_enabled() or _draws is None:
        return
    if not isinstance(out, _Tensor) or out.grad_fn is not None or not out.is_floating_point():
        return
    try:
        if not getattr(dist, "has_rsample", False):
            return
        params = _dist_tensors(dist)
        if not params or len(_draws) >= _MAX_DRAWS:
            return
        site = _site(_user_frame(_caller(2)))
        if site is None:
            return
        _draws[out] = _Draw(site, params)
        taint[0] = True
    except Exception:  # noqa: BLE001
        _internal_error("samples: draw")


def carry(args, out):
    """The mode, while ``taint`` is on: a call of the program's that takes a draw marks the node it
    builds, or passes the draw on to a value without graph."""
    try:
        if not len(_draws):
            taint[0] = False  # every draw is gone: the mode stops asking
            return
        d = None
        for a in args[:6]:
            if isinstance(a, _Tensor):
                d = _draws.get(a)
            elif isinstance(a, (list, tuple)) and len(a) < 16:
                d = next((_draws.get(x) for x in a if isinstance(x, _Tensor) and _draws.get(x) is not None), None)
            if d is not None:
                break
        if d is None:
            return
        f = sys._getframe(2)  # the caller of the mode's __torch_function__
        if "torch/distributions/" in f.f_code.co_filename.replace("\\", "/"):
            return  # log_prob, entropy, cdf of a distribution: scoring the draw, not differentiating it
        for o in (out if isinstance(out, (tuple, list)) else (out,)):
            if isinstance(o, _Tensor):
                g = o.grad_fn
                if g is not None:
                    g.metadata[_MARK] = d
                    _marked[0] += 1
                elif o.is_floating_point() and len(_draws) < _MAX_DRAWS:
                    _draws[o] = d
    except Exception:  # noqa: BLE001
        _internal_error("samples: carry")


def before_backward(roots, bw_site):
    if not _marked[0]:
        return
    try:
        nodes, _, _ = _walk([t.grad_fn for t in roots if t.grad_fn is not None], limit=20000)
        draws = []
        for n in nodes.values():
            try:
                d = n.metadata.get(_MARK)
            except Exception:  # noqa: BLE001
                continue
            if d is not None and all(d is not x for x in draws):
                draws.append(d)
        if not draws:
            _idle[0] += 1
            if _idle[0] >= _MAX_IDLE:  # the marked nodes are in no loss's graph: stop walking
                _marked[0] = _idle[0] = 0
            return
        _idle[0] = 0
        ids = set(nodes)
        leaves = {id(getattr(n, "variable", None)) for n in nodes.values() if getattr(n, "variable", None) is not None}
        for d in draws:
            if tuple(d.site[:2]) in _reported:
                continue
            direct = any((p.grad_fn is not None and id(p.grad_fn) in ids) or (p.grad_fn is None and id(p) in leaves)
                         for p in d.params)
            if not direct:
                continue
            _reported.add(tuple(d.site[:2]))
            # one GW722 at the draw: the generic dead-term report of the same line (the draw is a copy
            # that left the graph too) would say it again with a vaguer reason
            _state.reported.add(("dead-term", tuple(d.site)))
            _finding(("sample-cut", tuple(d.site)), code="GW722", kind="sample-without-gradient", severity="warning",
                     site=d.site, backward_site=bw_site,
                     message="`sample()` draws this value without a graph, and a loss computed from it is "
                             "backwarded: its gradient reaches the distribution's parameters through its other terms "
                             "but never through the draw (use `rsample()`, the reparameterised draw, when the loss "
                             "should train what the distribution is built from)")
    except Exception:  # noqa: BLE001
        _internal_error("samples: backward")


def install():
    try:
        import torch.distributions as D
    except Exception:  # noqa: BLE001
        return
    classes = [c for c in vars(D).values() if isinstance(c, type) and issubclass(c, D.Distribution)]
    for cls in classes:
        orig = vars(cls).get("sample")
        if orig is None or not callable(orig):
            continue

        def sample(self, *args, _orig=orig, **kwargs):
            _depth[0] += 1
            try:
                out = _orig(self, *args, **kwargs)
            finally:
                _depth[0] -= 1
            if _depth[0] == 0:
                _after_sample(self, out)
            return out

        sample.__wrapped__ = orig
        sample.__name__ = "sample"
        sample.__doc__ = getattr(orig, "__doc__", None)
        cls.sample = sample
    for cls in classes:
        init = vars(cls).get("__init__")
        if init is None or not callable(init):
            continue

        def __init__(self, *args, _orig=init, **kwargs):
            if _draws is not None and torch.is_grad_enabled() and not _state.suspended:
                _note_given(self, args, kwargs)
            return _orig(self, *args, **kwargs)

        __init__.__wrapped__ = init
        __init__.__doc__ = getattr(init, "__doc__", None)
        cls.__init__ = __init__


def _note_given(dist, args, kwargs):
    """The outermost constructor's tensors that require grad (a subclass's ``super().__init__``
    sees the object already noted)."""
    try:
        if dist in _given:
            return
        given = [a for a in list(args[:8]) + list(kwargs.values())[:8]
                 if isinstance(a, _Tensor) and a.requires_grad]
        _given[dist] = tuple(given)
    except Exception:  # noqa: BLE001
        _internal_error("samples: constructor")
