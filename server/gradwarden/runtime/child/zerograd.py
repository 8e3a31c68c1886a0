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
"""
from collections import deque

import torch

from .graphtags import _built_sites, _walk
from .paramnames import describe, quoted
from .records import _node_name
from .report import _finding, _internal_error

_Tensor = torch.Tensor

ZERO_FUNCS = frozenset(("round", "floor", "ceil", "trunc", "fix", "sign", "sgn", "round_", "floor_", "ceil_",
                        "trunc_", "sign_"))
_ZERO_NODES = frozenset(("RoundBackward0", "RoundBackward1", "FloorBackward0", "CeilBackward0", "TruncBackward0",
                         "SignBackward0", "SgnBackward0"))
_MAX_IDLE = 4
_LIMIT = 20000

seen = [False]  # read by the mode: a zero-derivative op was made with grad on since the last search
_idle = [0]
_zero_kind = {}


def kind_of(func):
    name = getattr(func, "__name__", "") or ""
    z = name in ZERO_FUNCS
    try:
        _zero_kind[func] = z
    except TypeError:
        pass
    return z


def note(out):
    """The mode: ``out`` was made by a zero-derivative op."""
    if isinstance(out, _Tensor) and out.grad_fn is not None and _idle[0] < _MAX_IDLE:
        seen[0] = True


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
            if zero:
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
        if name in _ZERO_NODES:
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


def _report(node, name, built, leaves, bw_site, optimizer_sites, user=None):
    op = name[: -len("Backward0")] if name.endswith("Backward0") else name[: -len("Backward1")]
    op = op.lower()
    names, sites = [], []
    for leaf in leaves[:5]:
        pname, owner, made = describe(leaf)
        names.append(quoted(leaf, pname))
        if made is not None and all(s["site"] != made for s in sites):
            sites.append({"kind": "created", "site": made, "message": "the %s holding it is built here" % owner})
        opt = optimizer_sites(leaf)
        if opt is not None and all(s["site"] != opt[1] for s in sites):
            sites.append({"kind": "optimizer", "site": opt[1], "message": "%s is given it here" % opt[0]})
    if built[1] is not None:
        sites.append({"kind": "call", "site": built[1], "message": "called here"})
    used = _built_sites(user) if user is not None else None
    if used is not None and used[0] is not None and list(used[0][:2]) != list(built[0][:2]):
        # where its output enters the loss: a straight-through estimator that detaches both of
        # its live terms (`a.detach() + (q - a.detach())`) leaves `q` the only path, here
        sites.append({"kind": "note", "site": used[0], "message": "its output is used here, the only path to the loss"})
    one = len(leaves) == 1
    more = " and %d more" % (len(leaves) - 5) if len(leaves) > 5 else ""
    _finding(("zero-gradient", tuple(built[0])), code="GW718", kind="zero-gradient", severity="warning",
             site=built[0], backward_site=bw_site, sites=sites,
             message="%s%s reach%s the loss only through `%s` (made here), whose derivative is zero: %s exactly zero "
                     "gradient, and nothing trains through here (a straight-through estimator passes the gradient: "
                     "x + (%s(x) - x).detach())" % (", ".join(names), more, "es" if one else "", op,
                                                     "it gets an" if one else "they get an", op))
