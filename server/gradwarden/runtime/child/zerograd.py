"""Gradients that are zero because every path to them crosses a zero-derivative op (GW718).

``round``, ``floor``, ``ceil``, ``trunc``, ``sign`` have a zero derivative everywhere, yet their
output requires grad: nothing raises, and whatever reaches the loss only through them gets an
all-zero gradient (fake quantization or a binarized weight without a straight-through
estimator, a loss on rounded predictions). Exact zeros alone prove nothing: the last bias of a
critic under a Wasserstein or hinge loss gets 1 - 1 = 0 at every step, by design. The proof is
structural and exact: when a backward (or ``autograd.grad``) returns, every path from its roots
to a leaf goes through such an op, and the leaf's gradient is exactly zero.

The graph is searched only when the mode saw such an op made with grad on since the last
search, and only ``_MAX_IDLE`` times without finding one on a loss's graph (a straight-through
estimator makes the op, and cuts it off the loss's graph with ``detach``).

*Saturated ops.* ``relu``, ``clamp``, ``hardtanh``, ``relu6``, ``threshold`` pass the gradient
only where their input is inside their range. When none of the elements is (``clamp`` with its
bounds reversed, ``relu(x - 100)``), the call's derivative is zero everywhere for these values: it
is then searched like the ops above. The values are read only while the run suspects such a cut:
after a backward left an optimizer's parameter an exactly zero gradient (``_suspect``), so a
correct program stops paying once every parameter it trains has had a non-zero gradient, or after
``_MAX_QUIET`` backward calls that left none at zero.
"""
from collections import deque

import torch

from .graphtags import _built_sites, _walk
from .paramnames import describe, quoted
from .records import _node_name
from .report import _finding, _internal_error
from .tensors import tensor_registry

_Tensor = torch.Tensor

ZERO_FUNCS = frozenset(("round", "floor", "ceil", "trunc", "fix", "sign", "sgn", "round_", "floor_", "ceil_",
                        "trunc_", "sign_"))
_ZERO_NODES = frozenset(("RoundBackward0", "RoundBackward1", "FloorBackward0", "CeilBackward0", "TruncBackward0",
                         "SignBackward0", "SgnBackward0"))
# ops whose derivative is zero outside a range of their input: name -> the input range that passes
# the gradient, from the call's arguments (see _passes)
SATURATING = frozenset(("relu", "relu_", "clamp", "clamp_", "clip", "clip_", "clamp_min", "clamp_min_", "clamp_max",
                        "clamp_max_", "hardtanh", "hardtanh_", "relu6", "threshold", "threshold_", "_threshold"))
_MAX_IDLE = 4
_LIMIT = 20000
_MAX_QUIET = 8  # backward calls without a parameter at exactly zero before the saturation watch stops
# backward calls with one before it stops (a saturated call is proven within the first few; a bias
# whose gradient is zero by design, 1 - 1 under a Wasserstein loss, would keep every relu read)
_MAX_SUSPECT = 16
_DEAD = "_gradwarden_saturated"  # node.metadata key: the call's derivative is zero at every element

_RANGES = {"relu": "positive inputs; every one is <= 0", "clamp": "between its bounds; every one is outside",
           "clip": "between its bounds; every one is outside", "clamp_min": "above its bound; every one is below",
           "clamp_max": "below its bound; every one is above", "hardtanh": "between its bounds; every one is outside",
           "relu6": "between 0 and 6; every one is outside", "threshold": "above its threshold; every one is below"}
seen = [False]  # read by the mode: a zero-derivative op was made with grad on since the last search
_idle = [0]
_zero_kind = {}
_suspect = [False]  # a backward left an optimizer's parameter an exactly zero gradient: read saturated ops
_quiet = [0]
_suspected = [0]
_live = tensor_registry()  # optimizer parameters that had a non-zero gradient


def kind_of(func):
    name = getattr(func, "__name__", "") or ""
    z = 1 if name in ZERO_FUNCS else 2 if name in SATURATING else 0
    try:
        _zero_kind[func] = z
    except TypeError:
        pass
    return z


def note(out, func=None, args=(), kwargs=None):
    """The mode: ``out`` was made by a zero-derivative op (or a saturating one: ``func``)."""
    if not isinstance(out, _Tensor) or out.grad_fn is None:
        return
    if _zero_kind.get(func) == 2:
        if _suspect[0] and _saturated(func, out, args, kwargs or {}):
            try:
                out.grad_fn.metadata[_DEAD] = func.__name__.strip("_")
                seen[0] = True
            except Exception:  # noqa: BLE001
                pass
        return
    if _idle[0] < _MAX_IDLE:
        seen[0] = True


def _arg(args, kwargs, i, *names):
    if len(args) > i:
        return args[i]
    for n in names:
        if n in kwargs:
            return kwargs[n]
    return None


def _saturated(func, out, args, kwargs):
    """True when no element of the call's input is where its derivative is non-zero."""
    name = (func.__name__ or "").strip("_")
    x = args[0] if args and isinstance(args[0], _Tensor) else None
    try:
        with torch.no_grad(), torch._C.DisableTorchFunction():
            if name == "relu":
                return not bool(out.gt(0).any())
            if x is None or not x.is_floating_point() or x.numel() == 0:
                return False
            if name in ("clamp", "clip", "clamp_min", "clamp_max"):
                lo = _arg(args, kwargs, 1, "min") if name != "clamp_max" else None
                hi = (_arg(args, kwargs, 2, "max") if name != "clamp_max" else _arg(args, kwargs, 1, "max")) \
                    if name != "clamp_min" else None
                if lo is None and hi is None:
                    return False
                ok = torch.ones_like(x, dtype=torch.bool)
                if lo is not None:
                    ok = ok & x.ge(lo)
                if hi is not None:
                    ok = ok & x.le(hi)
                return not bool(ok.any())
            if name in ("hardtanh", "relu6"):
                lo, hi = (0.0, 6.0) if name == "relu6" else (_arg(args, kwargs, 1, "min_val"),
                                                           _arg(args, kwargs, 2, "max_val"))
                lo = -1.0 if lo is None else lo
                hi = 1.0 if hi is None else hi
                return not bool((x.gt(lo) & x.lt(hi)).any())
            if name == "threshold":
                th = _arg(args, kwargs, 1, "threshold")
                return th is not None and not bool(x.gt(th).any())
    except Exception:  # noqa: BLE001
        return False
    return False


def watch_parameters(opt_params):
    """After a top-level backward: does an optimizer's parameter that never had a non-zero gradient
    have an exactly zero one now? Then the next forward's saturating calls are read."""
    if _live is None or (_quiet[0] >= _MAX_QUIET and not _suspect[0]) or _suspected[0] >= _MAX_SUSPECT:
        _suspect[0] = False
        return
    try:
        found = False
        with torch.no_grad(), torch._C.DisableTorchFunction():
            for p in opt_params():
                if _live.get(p) is not None:
                    continue
                g = p.grad
                if not isinstance(g, _Tensor) or g.is_sparse or not g.is_floating_point():
                    continue
                if bool(g.ne(0).any()):
                    _live[p] = True
                else:
                    found = True
        _suspect[0] = found
        if found:
            _suspected[0] += 1
        else:
            _quiet[0] += 1
    except Exception:  # noqa: BLE001
        _internal_error("zero gradient: watch")


def after_backward(kind, roots, inputs, outputs, bw_site, optimizer_sites):
    """When a top-level backward (``kind`` "backward") or ``autograd.grad`` (``inputs`` and
    their ``outputs``) returned."""
    if not seen[0]:
        return
    seen[0] = False
    try:
        starts = [t.grad_fn for t in roots if isinstance(t, _Tensor) and t.grad_fn is not None]
        zero_nodes, around, complete, users = _search(starts)
        if not complete:
            return
        if not zero_nodes:
            _idle[0] += 1
            return
        for node, name in zero_nodes:
            built = _built_sites(node)
            if built is None or built[0] is None:
                continue
            below, _, _ = _walk([node], limit=_LIMIT)
            leaves = []
            for n in below.values():
                var = getattr(n, "variable", None)
                if var is not None and id(var) not in around and var.is_floating_point():
                    leaves.append(var)
            zero = _zero_gradients(kind, leaves, inputs, outputs)
            if zero and _dead(node):
                _defer(node, name, built, zero, bw_site, optimizer_sites, users.get(id(node)))
            elif zero:
                _report(node, name, built, zero, bw_site, optimizer_sites, users.get(id(node)))
    except Exception:  # noqa: BLE001
        _internal_error("zero gradient")


def _search(starts):
    """Breadth-first from the roots, not crossing zero-derivative nodes: (the zero-derivative
    nodes met, ids of the leaves reached around them, whether the graph was searched whole)."""
    zero_nodes, around, seen_ids = [], set(), set()
    users = {}  # id(zero node) -> the node that first took its output in (the line that uses it)
    queue = deque((n, None) for n in starts)
    steps = 0
    while queue:
        if steps >= _LIMIT:
            return zero_nodes, around, False, users
        node, user = queue.popleft()
        steps += 1
        if id(node) in seen_ids:
            continue
        seen_ids.add(id(node))
        name = _node_name(node)
        if name in _ZERO_NODES or _dead(node):
            zero_nodes.append((node, name))
            if user is not None:
                users[id(node)] = user
            continue
        var = getattr(node, "variable", None)
        if var is not None:
            around.add(id(var))
        try:
            queue.extend((n, node) for n, _ in node.next_functions if n is not None)
        except Exception:  # noqa: BLE001
            continue
    return zero_nodes, around, True, users


# a saturated call is a fact of these values: one batch may leave a small layer's every unit off
# by chance. Reported when the run ends, when the same line was saturated at _MIN_SATURATED
# backward calls and the parameters below it never had a non-zero gradient in the whole run
_MIN_SATURATED = 2
_saturated_at = {}  # the call's site -> [count, the report's arguments, weakrefs of the leaves]


def _defer(node, name, built, leaves, bw_site, optimizer_sites, user):
    key = tuple(built[0][:2])
    entry = _saturated_at.get(key)
    if entry is None:
        if len(_saturated_at) >= 32:
            return
        sat = node.metadata.get(_DEAD)
        entry = _saturated_at[key] = [0, None, None]
        used = _built_sites(user) if user is not None else None
        entry[1] = (sat, name, built, bw_site, optimizer_sites, used)
        # kept (a script's globals are freed before the run ends), named while their modules live
        entry[2] = [(p, describe(p)) for p in leaves[:8]]
    entry[0] += 1


def finish():
    """When the run ends: the saturated calls that cut parameters off at every step."""
    try:
        for count, args, kept in list(_saturated_at.values()):
            if count < _MIN_SATURATED:
                continue
            leaves = [p for p, _ in kept if _live.get(p) is None]
            if leaves:
                _report(None, args[1], args[2], leaves, args[3], args[4], used=args[5], saturated=args[0],
                        named={id(p): d for p, d in kept})
        _saturated_at.clear()
    except Exception:  # noqa: BLE001
        _internal_error("zero gradient: finish")


def _dead(node):
    try:
        return _DEAD in node.metadata
    except Exception:  # noqa: BLE001
        return False


def _zero_gradients(kind, leaves, inputs, outputs):
    """The leaves whose gradient from this call is exactly zero."""
    out = []
    with torch.no_grad(), torch._C.DisableTorchFunction():
        if kind == "grad":
            pairs = list(zip(inputs or (), outputs if isinstance(outputs, (tuple, list)) else (outputs,)))
            for leaf in leaves:
                for inp, g in pairs:
                    if inp is leaf and isinstance(g, _Tensor) and g.is_floating_point() and not bool(g.ne(0).any()):
                        out.append(leaf)
        else:
            for leaf in leaves:
                g = leaf.grad
                if isinstance(g, _Tensor) and g.is_floating_point() and not bool(g.ne(0).any()):
                    out.append(leaf)
    return out


def _report(node, name, built, leaves, bw_site, optimizer_sites, user=None, used=None, saturated=None, named=None):
    op = name[: -len("Backward0")] if name.endswith("Backward0") else name[: -len("Backward1")]
    op = saturated or op.lower()
    names, sites = [], []
    for leaf in leaves[:5]:
        pname, owner, made = (named or {}).get(id(leaf)) or describe(leaf)
        names.append(quoted(leaf, pname))
        if made is not None and all(s["site"] != made for s in sites):
            sites.append({"kind": "created", "site": made, "message": "the %s holding it is built here" % owner})
        opt = optimizer_sites(leaf)
        if opt is not None and all(s["site"] != opt[1] for s in sites):
            sites.append({"kind": "optimizer", "site": opt[1], "message": "%s is given it here" % opt[0]})
    if built[1] is not None:
        sites.append({"kind": "call", "site": built[1], "message": "called here"})
    if used is None and user is not None:
        used = _built_sites(user)
    if used is not None and used[0] is not None and list(used[0][:2]) != list(built[0][:2]):
        # where its output enters the loss: a straight-through estimator that detaches both of
        # its live terms (`a.detach() + (q - a.detach())`) leaves `q` the only path, here
        sites.append({"kind": "note", "site": used[0], "message": "its output is used here, the only path to the loss"})
    one = len(leaves) == 1
    more = " and %d more" % (len(leaves) - 5) if len(leaves) > 5 else ""
    if saturated:
        _finding(("zero-gradient", tuple(built[0])), code="GW718", kind="zero-gradient", severity="warning",
                 site=built[0], backward_site=bw_site, sites=sites,
                 message="%s%s reach%s the loss only through `%s` (made here), and no element of its input is in the "
                         "range where its derivative is non-zero (%s): %s exactly zero gradient, and nothing "
                         "trains through here" % (
                             ", ".join(names), more, "es" if one else "", op, _RANGES.get(op, "its range"),
                             "it gets an" if one else "they get an"))
        return
    _finding(("zero-gradient", tuple(built[0])), code="GW718", kind="zero-gradient", severity="warning",
             site=built[0], backward_site=bw_site, sites=sites,
             message="%s%s reach%s the loss only through `%s` (made here), whose derivative is zero: %s exactly zero "
                     "gradient, and nothing trains through here (a straight-through estimator passes the gradient: "
                     "x + (%s(x) - x).detach())" % (", ".join(names), more, "es" if one else "", op,
                                                     "it gets an" if one else "they get an", op))
