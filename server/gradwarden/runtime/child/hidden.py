"""Silent hazards proven when backward runs: writes hidden from autograd (.detach()/.data),
retained graphs used after a parameter update, custom backwards overwriting a shared gradient."""
import torch

from .graphtags import _BUILT_COUNT, _add_built, _built_count, _built_sites, _next_nodes, _walk
from .records import _make_write, _node_name, _weakref, _write_sites
from .report import _finding, _internal_error, _state
from .tensors import _overlaps, _storage_key, tensor_registry
from .userfiles import _caller

_Tensor = torch.Tensor


_aliases = tensor_registry()  # x.detach() / x.data of a graph tensor x -> weakref to x

_silent_sites = set()  # write sites of the GW601/GW502 findings (the saved tensor's report says it all)

_hidden_found = []  # GW602 findings of the running backward, emitted when it ends: (key, fields)

_hidden = []  # writes through such an alias: [weakref to x, x's node, x's output_nr, write, build count, site]


def _note_alias(src, out):
    """``out`` is ``src.detach()`` or ``src.data``: a write through it changes ``src``'s values
    without autograd recording it (it shares the memory, not the graph)."""
    try:
        if _aliases is not None and isinstance(src, _Tensor) and src.grad_fn is not None and out is not src:
            _aliases[out] = _weakref(src)
    except Exception:  # noqa: BLE001
        _internal_error("alias")


def _check_hidden_write(func, t):
    ref = _aliases.get(t)
    if ref is None:
        base = t._base
        ref = _aliases.get(base) if base is not None else None
    src = ref() if ref is not None else None
    if src is None or src.grad_fn is None:
        return
    w = _make_write(func, _caller(4))
    site, _ = _write_sites(w)
    _hidden.append([ref, src.grad_fn, src.output_nr, w, _built_count[0], site])
    if len(_hidden) > 64:
        del _hidden[0]


def _check_hidden_uses(roots, bw_site):
    """Before a backward: a node built after a hidden write that takes the written tensor in
    used the new values, while backward differentiates the producer of the old ones."""
    for item in list(_hidden):
        ref, node, nr, w, count, site = item
        if ref() is None:
            _hidden.remove(item)
            continue

        def uses(n):
            if _BUILT_COUNT(n) <= count:
                return False
            try:
                return any(nxt is node and k == nr for nxt, k in n.next_functions)
            except Exception:  # noqa: BLE001
                return False

        _, _, consumer = _walk([t.grad_fn for t in roots], uses, limit=100000)
        if consumer is None:
            continue
        _hidden.remove(item)
        sites = []
        used = _add_built(sites, "use", consumer, "%s uses the written values here" % _node_name(consumer))
        made = _built_sites(node)
        if made is not None and made[0] is not None:
            sites.append({"kind": "created", "site": made[0],
                          "message": "autograd differentiates the values %s made here" % _node_name(node)})
        _hidden_found.append((("hidden", tuple(site or ())), dict(code="GW602", kind="data-write", severity="warning",
                 message="%s wrote through .detach()/.data into a tensor of the graph (%s): autograd did not record "
                         "it, so this backward differentiates the old values while the values used%s are the new "
                         "ones" % (w.op, _node_name(node), (" at line %s" % used[1]) if used else ""),
                 write_site=site, backward_site=bw_site, sites=sites, write_op=w.op)))


def _emit_hidden():
    """After the backward: the hidden writes whose saved-tensor report (GW601) did not say it."""
    items = list(_hidden_found)
    del _hidden_found[:]
    for key, fields in items:
        if tuple(fields.get("write_site") or ()) not in _silent_sites:
            _finding(key, **fields)

_leaf_writes = tensor_registry()  # leaf that requires grad -> (build count, site) of its last in-place write


def _check_stale_graph(roots, bw_site):
    """Before a backward that follows a ``retain_graph=True`` one: a node built before an
    in-place update of a parameter it takes in (an optimizer step) holds values computed from
    the old parameter; this backward differentiates those stale values (no error when the
    node did not save the parameter itself)."""
    if not _leaf_writes:
        return

    hit_leaf = [None]  # the updated leaf of the last hit

    def stale(node):
        count = _BUILT_COUNT(node)
        if count < 0:
            return None
        todo = _next_nodes(node)
        for _ in range(3):  # through the untagged nodes (t(), a view) to the leaves
            more = []
            for n in todo:
                var = getattr(n, "variable", None)
                if var is not None:
                    hit = _leaf_writes.get(var)
                    if hit is not None and hit[0] > count:
                        hit_leaf[0] = var
                        return hit
                elif _BUILT_COUNT(n) < 0:
                    more.extend(_next_nodes(n))
            todo = more
        return None

    nodes, _, _ = _walk(roots, limit=20000)
    for node in nodes.values():
        hit = stale(node)
        if hit is None:
            continue
        sites = []
        made = _add_built(sites, "created", node, "%s computed these values from the old parameter" %
                          _node_name(node))
        if hit[1] is not None:
            sites.append({"kind": "step", "site": hit[1], "message": "the parameter was updated in place here"})
        if made is None:
            continue
        # said once the backward returned: if it raises (the node saved the parameter), the
        # version-counter error says it better
        _stale_found.append(dict(code="GW405", kind="stale-graph", severity="warning", site=made, key=("stale", tuple(made)),
                 leaf=hit_leaf[0],
                 backward_site=bw_site, sites=sites,
                 message="this backward goes through %s, built at line %s from a parameter that was updated in place "
                         "afterwards (line %s): its values, and the gradients computed from them, are stale" % (
                             _node_name(node), made[1], hit[1][1] if hit[1] else "?")))
        return

_stale_found = []

_grad_watch = []  # hook handles on the nodes that may receive a gradient buffer a custom backward overwrote


def _watch_shared_grads(node, args, writes):
    """A custom backward wrote one of its grad_outputs in place. Harmless when the buffer is its
    own; but autograd hands one gradient tensor to several nodes (the two inputs of an ``a + b``
    get the same one): every node of this backward that has yet to run is watched, and one
    that receives the overwritten buffer is proof that it computes with the wrong gradient."""
    written = []
    for a in args:
        if isinstance(a, _Tensor):
            site = writes.get(_storage_key(a))
            if site is not None:
                written.append((a, site))
    roots = _state.cur_roots
    if not written or not roots:
        return
    nodes, _, _ = _walk(roots, limit=20000)
    # the nodes below the writer get what it returns (often the written buffer itself): that is
    # its gradient, not a shared one
    below, _, _ = _walk([node], limit=20000)
    for other in nodes.values():
        if id(other) in below:
            continue
        try:
            _grad_watch.append(other.register_prehook(_shared_grad_hook(other, node, written)))
        except Exception:  # noqa: BLE001
            continue


def _shared_grad_hook(other, writer, written):
    def hook(grad_outputs):
        try:
            for g in grad_outputs:
                if g is None:
                    continue
                for t, site in written:
                    if g is t or (_storage_key(g) == _storage_key(t) and _overlaps(g, t)):
                        sites = []
                        used = _add_built(sites, "use", other, "%s receives the overwritten gradient" %
                                          _node_name(other))
                        _finding(("shared-grad", tuple(site or ())), code="GW303", kind="grad-output-write",
                                 severity="warning", write_site=site, sites=sites,
                                 backward_site=_state.cur_bw[1] if _state.cur_bw else None,
                                 message="the custom backward of %s writes into grad_output in place, but autograd "
                                         "hands the same gradient buffer to %s%s: that node computes with the "
                                         "overwritten values (silently wrong gradients)" % (
                                             _node_name(writer), _node_name(other),
                                             (" (line %s)" % used[1]) if used else ""))
                        return None
        except Exception:  # noqa: BLE001
            _internal_error("shared grad hook")
        return None

    return hook


def _unwatch_grads():
    handles = list(_grad_watch)
    del _grad_watch[:]
    for h in handles:
        try:
            h.remove()
        except Exception:  # noqa: BLE001
            pass
