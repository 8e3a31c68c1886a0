"""Where autograd nodes were built (tags in the node's metadata) and walks over the graph."""
import torch

from . import userfiles as _uf
from .report import _internal_error, _state
from .userfiles import _caller, _display_file

_Tensor = torch.Tensor


def _unpack_tag(node):
    """(save site, backward number, backward site, retained) of the last backward that ran
    ``node`` (set when it unpacked its saved tensors), or None."""
    try:
        return node.metadata.get("_gradwarden")
    except Exception:  # noqa: BLE001
        return None


def _next_nodes(node):
    try:
        return [n for n, _ in node.next_functions if n is not None]
    except Exception:  # noqa: BLE001
        return []


def _walk(starts, stop=None, limit=200000):
    """Breadth-first over the graph below ``starts``: (nodes by id, parent by id, the first node
    for which ``stop`` is true or None). The nodes are kept alive, so their ids stay unique."""
    from collections import deque

    nodes, parent = {}, {}
    queue = deque()
    for n in starts:
        if n is not None and id(n) not in nodes:
            nodes[id(n)] = n
            parent[id(n)] = None
            queue.append(n)
    steps = 0
    while queue and steps < limit:
        node = queue.popleft()
        steps += 1
        if stop is not None and stop(node):
            return nodes, parent, node
        for nxt in _next_nodes(node):
            if id(nxt) not in nodes:
                nodes[id(nxt)] = nxt
                parent[id(nxt)] = node
                queue.append(nxt)
    return nodes, parent, None


def _add_built(sites, kind, node, message):
    """Append the sites where ``node`` was built (inner, and the outer call when different):
    the mode's tag, else (a node made inside a C++ implementation) where it saved tensors."""
    built = _built_sites(node)
    if built is None or built[0] is None:
        tag = _unpack_tag(node)
        if tag is None or not tag[0]:
            return None
        built = (tag[0], None, None)
    sites.append({"kind": kind, "site": built[0], "message": message})
    if built[1] is not None:
        sites.append({"kind": kind, "site": built[1], "message": message + " (the call)"})
    return built[0]


def _BUILT_COUNT(node):
    try:
        tag = node.metadata.get(_BUILT)
    except Exception:  # noqa: BLE001
        return -1
    return tag[3] if tag is not None else -1

_BUILT = "_gradwarden_built"  # node.metadata key: ((inner code, line), (outer code, line), backward count, build number, inner instruction)


def _tag_built(out):
    """Tag the autograd nodes a call created with where the user made them (the innermost and
    the outermost of the user's frames) and how many backward calls had started then: a
    freed-graph error can then say where the stale tensor was made and where it was reused."""
    try:
        if isinstance(out, _Tensor):
            g = out.grad_fn
            if g is None:
                return
            md = g.metadata
            if _BUILT not in md:
                md[_BUILT] = _build_tag(_caller(1))
        elif isinstance(out, (tuple, list)):
            tag = None
            for o in out:
                for t in (o if isinstance(o, (tuple, list)) else (o,)):
                    if isinstance(t, _Tensor):
                        g = t.grad_fn
                        if g is not None:
                            md = g.metadata
                            if _BUILT not in md:
                                if tag is None:
                                    tag = _build_tag(_caller(1))
                                md[_BUILT] = tag
    except Exception:  # noqa: BLE001
        _internal_error("build tag")


def _build_tag(f):
    inner = outer = None
    lasti = -1
    cache = _uf._ucache
    while f is not None:
        code = f.f_code
        u = cache.get(code.co_filename)
        if u is None:
            u = _uf._USER.classify(code.co_filename)
        if u:
            if inner is None:
                inner = (code, f.f_lineno)
                lasti = f.f_lasti  # the instruction of the line (which call of it made the node)
            else:
                outer = (code, f.f_lineno)
        f = f.f_back
    _built_count[0] += 1
    return (inner, outer, _state.bw_count, _built_count[0], lasti)

_built_count = [0]  # build tags handed out (orders the nodes the mode saw made)


def _code_site(pair):
    if pair is None:
        return None
    code, line = pair
    return [_display_file(code.co_filename), line, code.co_name]


def _built_sites(node):
    """(inner site, outer site or None, backward count) where ``node`` was built, or None."""
    try:
        tag = node.metadata.get(_BUILT)
    except Exception:  # noqa: BLE001
        return None
    if tag is None:
        return None
    inner = _code_site(tag[0])
    outer = _code_site(tag[1])
    if outer is not None and inner is not None and outer[:2] == inner[:2]:
        outer = None
    return inner, outer, tag[2]
