"""Freed-graph errors: where the stale tensor was reused, made and first used, which
backward freed it."""
import torch

from . import memo as _memo
from .graphtags import _BUILT, _add_built, _built_sites, _next_nodes, _unpack_tag, _walk
from .records import ATTR_STORE, _dist_sites, _mod_sites, _node_name
from .report import _finding, _mark
from .userfiles import _caller, _display_file, _user_frame


def _freed_graph(exc, roots, site, current):
    """A backward ran into a node whose saved tensors an earlier backward freed. Find that node
    (the unpack hook tagged every node it ran with the backward that ran it), then, on the path
    from the root to it, the boundary between this backward's graph and the freed one: the
    node that reuses the stale tensor (built after the freeing backward, or run by this one)
    and the node that made the stale tensor. No path node on this side: the root itself is
    stale, backward goes twice through one graph."""
    def freed(node):
        tag = _unpack_tag(node)
        return tag is not None and not tag[3] and tag[1] != current

    nodes, parent, found = _walk([t.grad_fn for t in roots], freed)
    if found is None:
        _finding(("freed", tuple(site or ())), code="GW402", kind="freed-graph", severity="error",
                 message="backward through a graph that an earlier backward freed (the freed node was not seen)",
                 backward_site=site, error=str(exc).splitlines()[0])
        _mark(exc)
        return
    tag = _unpack_tag(found)
    built, freed_n, freed_site, _ = tag
    path = [found]
    while parent[id(path[-1])] is not None:
        path.append(parent[id(path[-1])])
    path.reverse()  # root ... found

    def live(node):
        t = _unpack_tag(node)
        if t is not None and t[1] == current:
            return True
        b = _built_sites(node)
        return b is not None and b[2] >= freed_n

    boundary = None
    for i in range(len(path) - 2, -1, -1):
        if live(path[i]):
            boundary = i
            break
    sites = []
    if freed_site:
        sites.append({"kind": "freed", "site": freed_site,
                      "message": "backward #%d freed this graph (no retain_graph=True)" % freed_n})
    if built:
        sites.append({"kind": "save", "site": built, "message": "the freed part of the graph was built here (%s)"
                      % _node_name(found)})
    primary = None
    if boundary is not None:
        code = "GW402"
        consumer, stale = path[boundary], path[boundary + 1]
        primary = None
        for node in reversed(path[:boundary + 1]):  # the consumer, else the nearest node above it with a site
            primary = _add_built(sites, "reuse", node, "backward #%d reuses here (%s) a tensor of the graph that "
                                 "backward #%d freed" % (current, _node_name(consumer), freed_n))
            if primary is not None:
                break
        made = None
        for node in path[boundary + 1:]:  # the stale tensor's node, else the nearest one below with a site
            made = _add_built(sites, "created", node, "the stale tensor (%s) was made here, before backward #%d"
                              % (_node_name(stale), freed_n))
            if made is not None:
                break
        holder = _holder(path[boundary + 1:])
        stored = _stored(stale)
        if stored is None and primary is not None and freed_site and list(primary[::2]) == list(freed_site[::2]) \
                and primary[1] < freed_site[1]:
            # read above the backward that freed it, in the same function: carried into a later
            # iteration; a variable that still holds it (`first = losses` on the first step) was
            # stored with its graph, the line to change (a tensor reused after the backward in the
            # same pass, a GAN's `fake`, is fixed where it is reused)
            stored = _kept_in_local(stale)
        if holder is not None:
            name, (built_at, called_at), kind = holder
            message = ("the stale tensor is kept as `%s` on the %s built here, before backward #%d: every later "
                       "use reads the tensor of the first graph" % (name, kind, freed_n))
            sites.append({"kind": "holder", "site": built_at, "message": message})
            if called_at is not None and called_at[:2] != built_at[:2]:
                sites.append({"kind": "holder", "site": called_at, "message": message + " (the call)"})
        first = _first_use(freed_n, stale)
        if first is not None:
            _add_built(sites, "first-use", first, "backward #%d went through the stale tensor from here (%s) and "
                       "freed its graph" % (freed_n, _node_name(first)))
        message = "backward #%d reuses a tensor of a graph that backward #%d (line %s) freed: %s" % (
            current, freed_n, freed_site[1] if freed_site else "?", _node_name(stale))
        if made is not None:
            message += " made at line %s" % made[1]
        if primary is not None:
            message += ", reused at line %s" % primary[1]
        memo = _memoised(path[boundary + 1:]) if stored is None else None
        if memo is not None:
            # returned by a function memoised with functools.lru_cache/cache: every call after the
            # first returns the first graph's tensor; the decorator is the line to change
            where, name = memo
            message += "; it is returned by `%s`, memoised by the cache decorator at line %s: every call after the " \
                       "first returns the tensor of the first graph" % (name, where[1])
            if primary is not None and primary[:2] != where[:2]:
                sites.append({"kind": "reuse", "site": primary, "message": "the stale tensor is read here"})
            primary = where
        if stored is not None:
            # the stale tensor was given to a module as a plain attribute with its graph (a memory
            # carried across steps): that store is the line to change (`.detach()` there)
            where, attr, owner = stored
            message += "; it was kept with its graph as `%s`%s at line %s" % (
                attr, "" if owner == "variable" else " of the %s" % owner, where[1])
            if primary is not None and primary[:2] != where[:2]:
                sites.append({"kind": "reuse", "site": primary, "message": "the stale tensor is read here"})
            primary = where
    else:
        code = "GW401"
        origin = _origin(path[0], freed_n)
        if origin is not None:
            primary = _add_built(sites, "created", origin, "the freed graph starts here (%s)" % _node_name(origin))
        message = ("backward #%d goes through a graph that backward #%d (line %s) already went through and freed "
                   "(no retain_graph=True)%s" % (current, freed_n, freed_site[1] if freed_site else "?",
                                                  ("; the graph starts at line %s" % primary[1]) if primary else ""))
    key = ("freed", tuple(built or ()), tuple(freed_site or ()), tuple(site or ()))
    _finding(key, code=code, kind="freed-graph", severity="error", message=message, site=primary or built,
             save_site=built, backward_site=site, freed_site=freed_site, save_op=_node_name(found),
             sites=sites, error=str(exc).splitlines()[0])
    _mark(exc)


def _memoised(stale_nodes):
    """(decorator site, function name) when the stale tensor (the first of ``stale_nodes`` with a build
    tag) was made in a function of the program memoised by ``functools.lru_cache``/``cache``."""
    for node in stale_nodes[:8]:
        try:
            tag = node.metadata.get(_BUILT)
        except Exception:  # noqa: BLE001
            continue
        if tag is None:
            continue
        for pair in tag[:2]:
            code = pair[0] if pair is not None else None
            where = _memo.site_of(code) if code is not None else None
            if where is not None:
                return where, code.co_name
        return None
    return None


def _stored(stale):
    """(site, attribute, module type) of the store that kept the stale tensor as a plain attribute
    of a module (patches._note_graph_attribute), or None."""
    try:
        tag = stale.metadata.get(ATTR_STORE)
    except Exception:  # noqa: BLE001
        return None
    return tag if tag is not None and tag[0] is not None else None


def _kept_in_local(stale):
    """(site, name, "variable") of the store of a local variable of the frame that backwards which
    holds the stale tensor itself (``initial_losses = task_losses`` kept across steps), or None."""
    try:
        from .groups import _bound_at

        f = _user_frame(_caller(3))
        if f is None:
            return None
        for name, value in list(f.f_locals.items())[:256]:
            for t in (value if isinstance(value, (tuple, list)) else (value,))[:16]:
                if isinstance(t, torch.Tensor) and t.grad_fn is stale:
                    line = _bound_at(f.f_code, name, f.f_lineno)
                    if line is not None:
                        return [_display_file(f.f_code.co_filename), line, f.f_code.co_name], name, "variable"
    except Exception:  # noqa: BLE001
        return None
    return None


def _holder(stale_nodes):
    """(attribute, construction site, type name) of an object the run saw built (a
    torch.distributions object, whose lazy properties cache tensors; an nn.Module) that keeps a
    tensor of the stale graph as a plain attribute, or None."""
    ids = {id(n) for n in stale_nodes}
    for registry in (_dist_sites, _mod_sites):
        for obj, site in list(registry.items()):
            if registry is _mod_sites:
                site = (site, None)
            try:
                attrs = vars(obj)
            except TypeError:
                continue
            for name, value in list(attrs.items()):
                for t in (value if isinstance(value, (tuple, list)) else (value,)):
                    if isinstance(t, torch.Tensor) and not isinstance(t, torch.nn.Parameter) and \
                            id(t.grad_fn) in ids and t.grad_fn is not None:
                        return name, site, type(obj).__name__
    return None


def _first_use(freed_n, stale):
    """The node of backward #freed_n's graph that took ``stale`` in (its roots are kept for the
    last few backward calls), or None."""
    roots = _bw_roots.get(freed_n)
    if not roots:
        return None
    _, _, hit = _walk(roots, lambda node: any(n is stale for n in _next_nodes(node)))
    return hit


def _origin(root, freed_n):
    """The first-built node (lowest sequence number) of the stale graph below ``root``."""
    nodes, _, _ = _walk([root], limit=50000)
    best = None
    for node in nodes.values():
        b = _built_sites(node)
        if b is None or b[0] is None or b[2] >= freed_n:
            continue
        try:
            seq = node._sequence_nr()
        except Exception:  # noqa: BLE001
            continue
        if best is None or seq < best[0]:
            best = (seq, node)
    return best[1] if best else None

_bw_roots = {}  # backward number -> root nodes of that top-level backward without retain_graph (the last few)


def _remember_roots(n, roots):
    nodes = [t.grad_fn for t in roots if t.grad_fn is not None]
    if nodes:
        _bw_roots[n] = nodes
        for old in [k for k in _bw_roots if k <= n - 2]:
            del _bw_roots[old]
