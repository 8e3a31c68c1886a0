"""Non-finite gradients from a branch the forward did not use (GW720).

``torch.where(mask, x, 1 / x)``, ``torch.where(p > 0, p * p.log(), 0)``, a ``log`` of
probabilities masked afterwards: the forward value is finite where it is used, but backward
differentiates every element. Where the mask dropped an element its incoming gradient is 0,
and the op's derivative there is infinite or undefined (``1/x`` at 0, ``log`` at 0, ``exp``
that overflowed, ``sqrt`` at 0): 0 x inf = NaN, which then reaches the parameters. Nothing
raises; the model silently trains on NaN (or stops training).

The proof, per backward, without anomaly mode (which changes nothing of the program's but
checks every node): a hook on the node of each op that can have an infinite derivative
(``_SINGULAR``: log, division by a tensor, reciprocal, sqrt, rsqrt, exp, fractional or negative
powers, acos/asin/atanh, ...; made with grad on, seen by the function mode) checks, when that
node runs, that it turned a finite incoming gradient into a non-finite one at positions where
the incoming gradient is exactly 0. When that backward returns, the non-finite values must
have reached a gradient the program gets (a leaf's ``.grad`` below that node, or an output of
``autograd.grad``): then the op is reported at the line that made it. Overflow of a non-zero
gradient (mixed precision, which GradScaler handles) and NaN already in the incoming gradient
are not this and are not reported.

Cost: a dictionary lookup per torch call, a hook per singular op made with grad on, and in
backward one finiteness test of that op's gradient (on CUDA, without a synchronisation: the
tests are gathered and read once when the backward returns).
"""
import torch

from .graphtags import _BUILT, _built_sites, _walk
from .paramnames import describe
from .records import _current_node, _node_name
from .report import _finding, _internal_error, _state

_Tensor = torch.Tensor

_UNARY = frozenset(("log", "log2", "log10", "log1p", "reciprocal", "sqrt", "rsqrt", "exp", "exp2", "expm1",
                    "acos", "asin", "atanh", "arccos", "arcsin", "arctanh", "tan", "erfinv", "lgamma", "digamma",
                    "logit", "xlogy", "special_xlogy", "special_entr", "__rtruediv__", "__rdiv__", "cosh",
                    "sinh", "float_power"))
_DIVIDE = frozenset(("div", "divide", "true_divide", "__truediv__", "__div__"))
_POWER = frozenset(("pow", "__pow__"))
# ops that hide non-finite values of their input in the forward (`nan_to_num`), or select around
# them (`where`, `masked_fill`): the op that made those values is watched, whatever it is (a product
# `0 * -inf`), since its backward gets a zero gradient exactly there
_MASKING = frozenset(("nan_to_num", "nan_to_num_", "where", "masked_fill"))
_MAX_MASKED_NODES = 4  # nodes below a masking op's input watched
_MASKED = "masked"  # _SINGULAR_TAG value: watched because a masking op hid its non-finite output

_singular = {}  # torch function -> 0 (not singular), 1 (always), 2 (a division), 3 (a power)

_SINGULAR_TAG = "gradwarden.singular"  # node metadata: this node's op can have an infinite derivative
_MAX_UPSTREAM = 8  # singular ops below the reported one named in its finding

_found = []  # [(node, n_bad)] recorded by the hooks of the running backward
_deferred = []  # [(node, flag tensor, count tensor)]: CUDA checks read when the backward returns
defer = [False]  # True: the CUDA path (gathered flags) on CPU too; the tests take it through sys.modules


def kind_of(func):
    """0, or how to decide whether ``func``'s result can have an infinite derivative."""
    name = getattr(func, "__name__", "") or ""
    kind = 1 if name in _UNARY else 2 if name in _DIVIDE else 3 if name in _POWER else 4 if name in _MASKING else 0
    try:
        _singular[func] = kind
    except TypeError:
        pass
    return kind


def watch(kind, args, out):
    """Called by the mode for a singular op's result (grad mode may be off)."""
    try:
        if not isinstance(out, _Tensor) or out.grad_fn is None or not torch.is_grad_enabled():
            return
        if not (out.is_floating_point() or out.is_complex()):
            return
        if kind == 4:
            _watch_masked(args)
            return
        if kind == 2 and not (len(args) > 1 and isinstance(args[1], _Tensor)):
            return  # divided by a number: its derivative is that constant
        if kind == 3 and len(args) > 1 and not isinstance(args[1], _Tensor):
            e = args[1]
            if not isinstance(e, (int, float)) or e >= 1 or e == 0:
                return  # x ** 2: finite derivative everywhere
        out.grad_fn.register_hook(_hook)
        out.grad_fn.metadata[_SINGULAR_TAG] = True
        _watch_inner(out.grad_fn, args)
    except Exception:  # noqa: BLE001
        _internal_error("nonfinite watch")


_MAX_INNER = 4  # nodes a composite call built below its output's node, watched with it


def _watch_inner(top, args):
    """A call that torch implements in Python or by composition builds more than one node, and the
    singular one may be below its output's (``1.0 / x`` is ``reciprocal(x) * 1.0``: the output's node
    multiplies by a constant, the reciprocal's is the one that makes 0 x inf). The nodes the call made
    (below ``top``, above its inputs' own nodes, not tagged by the mode as made by another call) are
    watched too, tagged as made where the call was."""
    stop = {id(a.grad_fn) for a in args[:4] if isinstance(a, _Tensor) and a.grad_fn is not None}
    tag = top.metadata.get(_BUILT)
    todo, seen = [n for n, _ in top.next_functions if n is not None], 0
    while todo and seen < _MAX_INNER:
        node = todo.pop(0)
        if id(node) in stop or _BUILT in node.metadata or node.metadata.get(_SINGULAR_TAG) \
                or not node.next_functions or type(node).__name__ == "AccumulateGrad":
            continue
        seen += 1
        node.register_hook(_hook)
        node.metadata[_SINGULAR_TAG] = True
        if tag is not None:
            node.metadata[_BUILT] = tag
        todo.extend(n for n, _ in node.next_functions if n is not None)


def _watch_masked(args):
    """A masking op's tensor inputs that carry non-finite values (on the CPU: read without a device
    synchronisation): the nodes that made them are watched (``0 * -inf`` in a product is NaN,
    ``nan_to_num`` hides it in the forward, the product's backward still makes NaN)."""
    for a in args[:3]:
        if not isinstance(a, _Tensor) or a.grad_fn is None or a.is_cuda or not a.is_floating_point():
            continue
        with torch._C.DisableTorchFunction():
            if bool(torch.isfinite(a).all()):
                continue
        todo, seen = [a.grad_fn], set()
        while todo and len(seen) < _MAX_MASKED_NODES:
            node = todo.pop(0)
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if not node.metadata.get(_SINGULAR_TAG):
                node.register_hook(_hook)
                node.metadata[_SINGULAR_TAG] = _MASKED
            try:
                todo.extend(n for n, _ in node.next_functions)
            except Exception:  # noqa: BLE001
                pass


def _hook(grad_inputs, grad_outputs):
    """Node hook: grad_outputs is what came in, grad_inputs what the node computed."""
    if _found or _state.bw_depth == 0:
        return None
    try:
        with torch._C.DisableTorchFunction():
            incoming = [g for g in grad_outputs if isinstance(g, _Tensor)]
            if not incoming:
                return None
            for gi in grad_inputs:
                if not isinstance(gi, _Tensor) or not gi.is_floating_point():
                    continue
                same = [g for g in incoming if g.shape == gi.shape]
                if not same:
                    continue
                go = same[0]
                if gi.is_cuda or defer[0]:
                    bad = ~torch.isfinite(gi)
                    flag = bad.any() & torch.isfinite(go).all() & ~(bad & (go != 0)).any()
                    for g in incoming[1:]:
                        flag = flag & torch.isfinite(g).all()
                    _deferred.append((_current_node(), flag, bad.sum()))
                    if len(_deferred) > 4096:
                        del _deferred[:2048]
                    return None
                if bool(torch.isfinite(gi).all()):
                    continue
                if not all(bool(torch.isfinite(g).all()) for g in incoming):
                    return None  # non-finite already coming in: not this node's doing
                bad = ~torch.isfinite(gi)
                if bool((bad & (go != 0)).any()):
                    return None  # non-finite where the gradient is used: overflow, not a dropped branch
                _found.append((_current_node(), int(bad.sum())))
                return None
    except Exception:  # noqa: BLE001
        _internal_error("nonfinite hook")
    return None


def before_backward():
    del _found[:]
    del _deferred[:]


def after_backward(kind, roots, outputs, bw_site):
    """When a top-level backward returned: report the first proven node whose non-finite
    gradient reached what the program gets."""
    try:
        if _deferred and not _found:
            flags = torch.stack([f for _, f, _ in _deferred])
            if bool(flags.any()):
                i = int(flags.nonzero()[0, 0])
                node, _, n = _deferred[i]
                _found.append((node, int(n)))
        if not _found:
            return
        node, n_bad = _found[0]
        if node is None:
            return
        reached = _reached(node, kind, outputs)
        if reached is None:
            return
        _report(node, n_bad, reached, bw_site)
    except Exception:  # noqa: BLE001
        _internal_error("nonfinite report")
    finally:
        del _found[:]
        del _deferred[:]


def _reached(node, kind, outputs):
    """What received the non-finite values: a leaf below ``node`` whose .grad is not finite
    (``backward``), or an output of ``autograd.grad``; None when they were masked again."""
    with torch._C.DisableTorchFunction():
        if kind == "grad":
            for o in (outputs if isinstance(outputs, (tuple, list)) else (outputs,)):
                if isinstance(o, _Tensor) and o.is_floating_point() and not bool(torch.isfinite(o).all()):
                    return "an output of torch.autograd.grad"
            return None
        nodes, _, _ = _walk([node], limit=20000)
        for n in nodes.values():
            var = getattr(n, "variable", None)
            if isinstance(var, _Tensor) and var.grad is not None and var.grad.is_floating_point():
                if not bool(torch.isfinite(var.grad).all()):
                    name, owner, _ = describe(var)
                    return "`%s`" % name if name else "a leaf of shape %s" % (list(var.shape),)
    return None


def _upstream_singular(node, site):
    """Sites of the singular ops below ``node`` (toward the leaves), other than ``site``."""
    out = []
    with torch._C.DisableTorchFunction():
        nodes, _, _ = _walk([node], limit=20000)
        for n in nodes.values():
            if n is node:
                continue
            try:
                if n.metadata.get(_SINGULAR_TAG) is not True:  # singular ops, not those a mask had watched
                    continue
            except Exception:  # noqa: BLE001
                continue
            built = _built_sites(n)
            if built is None or built[0] is None or list(built[0][:2]) == list(site[:2]):
                continue
            if all(list(built[0][:2]) != list(o[:2]) for o in out):
                out.append(built[0])
            if len(out) >= _MAX_UPSTREAM:
                break
    return out


def _operand_sites(node, site):
    out = []
    try:
        for n, _ in node.next_functions:
            built = _built_sites(n) if n is not None else None
            if built is None or built[0] is None or list(built[0][:2]) == list(site[:2]):
                continue
            if all(list(built[0][:2]) != list(o[:2]) for o in out):
                out.append(built[0])
    except Exception:  # noqa: BLE001
        pass
    return out


def _report(node, n_bad, reached, bw_site):
    built = _built_sites(node)
    if built is None or built[0] is None:
        return
    site = built[0]
    op = _node_name(node) or "this op"
    sites = []
    if built[1] is not None:
        sites.append({"kind": "call", "site": built[1], "message": "called here"})
    # the other singular ops the non-finite values flowed through on their way to the leaves
    # (`theta = sqrt(theta2)` below `(1 - cos(theta)) / theta**2`): the first node to turn a zero
    # into NaN is the one nearest the loss, while the fix may go into any of them (a static
    # diagnostic naming one of those lines is confirmed by this finding)
    sites.extend({"kind": "note", "site": s, "message": "a singular op the non-finite gradient went through"}
                 for s in _upstream_singular(node, site))
    if node.metadata.get(_SINGULAR_TAG) == _MASKED:
        # an op that is finite-derivative by itself (a product) made NaN from the non-finite values
        # of an operand: where that operand was made is where it can be made finite
        for s in _operand_sites(node, site):
            if all(list(x["site"][:2]) != list(s[:2]) for x in sites):
                sites.append({"kind": "note", "site": s, "message": "an operand with non-finite values is made here"})
        why = ("those values were hidden in the forward (nan_to_num, where, masked_fill), but its backward "
               "multiplies a zero by the infinite values of an operand, and 0 x inf = NaN")
        fix = "make the operand finite where it is masked, e.g. clamp_min a log-probability"
    else:
        why = ("those values were not used (a where, a mask or a clamp did not pass them on), but the op's derivative there is "
               "infinite or undefined, and 0 x inf = NaN")
        fix = "make the branch finite before the op, e.g. where(mask, x, 1) inside it"
    _finding(("nonfinite", tuple(site)), code="GW720", kind="nonfinite-gradient", severity="warning", site=site,
             backward_site=bw_site, sites=sites,
             message="backward of %s (made here) turned a zero incoming gradient into NaN/inf at %d position(s): "
                     "%s; it reaches the gradient of %s (%s)" % (op, n_bad, why, reached, fix))
