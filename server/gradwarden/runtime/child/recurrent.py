"""A loop-carried state detached at every step of one forward (GW733).

``for t in range(T): h = cell(x[:, t], h.detach())`` with one loss on the last ``h``: each step's
graph is built, then cut off by the next step's ``detach()`` and thrown away; backward runs through
the last step only, so nothing learns across time steps (truncated BPTT with a window of one, and
every earlier step's graph built for nothing). Nothing raises; every parameter gets a gradient.

The run proves it without intent when all of these hold:

- your code calls ``.detach()`` on a floating tensor with a graph built by a line of your code
  *since the last backward started* (a state detached after the backward that used its graph,
  truncated BPTT between chunks, is not this);
- the copy is passed to a call made at that same line in a later run of it (the recurrence: the
  line that made the value takes its detached copy back in; a straight-through estimator
  ``t + (t.round() - t).detach()`` takes its copy in the run that made it);
- the next backward goes through nodes that line built after the copy was made, and not through
  the detached value's own graph (it is lost: no output of the earlier steps reaches any loss).

A detached value used elsewhere (a TD target, a log, a queue) is never fed back to the line that
made it; an iterative refinement whose every step is in the loss (RAFT's sequence loss) backwards
through each detached value's graph. Shown at the ``detach()`` call.
"""
from .graphtags import _BUILT, _built_count, _walk
from .report import _finding, _internal_error, _state
from .tensors import tensor_registry
from .userfiles import _caller, _site, _user_frame

_MAX = 32

_copies = tensor_registry()  # the detached copy -> _Cut
taint = [False]  # read by the mode: some copy is alive since the last backward
_cuts = []
_reported = set()


class _Cut(object):
    __slots__ = ("node", "line", "lasti", "count", "site", "fed")

    def __init__(self, node, line, lasti, count, site):
        self.node = node  # the detached value's node (kept until the next backward)
        self.line = line  # (code, line) that built it
        self.lasti = lasti  # the instruction of that line that built it
        self.count = count  # build tags handed out when it was detached
        self.site = site  # the detach() call
        self.fed = False


def note_detach(src, out):
    """The mode, for ``src.detach()`` with grad on: a copy of a value built since the last backward."""
    try:
        g = src.grad_fn
        if g is None or not src.is_floating_point() or len(_cuts) >= _MAX:
            return
        tag = g.metadata.get(_BUILT)
        if tag is None or tag[0] is None or tag[2] != _state.bw_count:
            return
        f = _user_frame(_caller(2))
        if f is None or f.f_code is not tag[0][0]:
            return  # detached in another function than the one that made it
        # a copy not fed back by now is another use (a log, a target): forget its graph
        unfed = [c for c in _cuts if not c.fed]
        if len(unfed) >= 4:
            drop = {id(c) for c in unfed[:-3]}
            _cuts[:] = [c for c in _cuts if id(c) not in drop]
        c = _Cut(g, tag[0], tag[4] if len(tag) > 4 else -1, _built_count[0], _site(f))
        _cuts.append(c)
        _copies[out] = c
        taint[0] = True
    except Exception:  # noqa: BLE001
        _internal_error("recurrent: detach")


def carry(args):
    """The mode, while ``taint`` is on: a call that takes a copy at the line that made its value."""
    try:
        for a in args[:6]:
            c = None
            if isinstance(a, _Tensor):
                c = _copies.get(a)
            elif isinstance(a, (list, tuple)) and len(a) < 16:
                c = next((_copies.get(x) for x in a if isinstance(x, _Tensor) and _copies.get(x) is not None), None)
            if c is None or c.fed:
                continue
            f = _user_frame(_caller(2))
            # a later run of the line: an instruction at or before the one that made the value (within
            # one run of a line its instructions only move forward: `t + (t.round() - t).detach()`,
            # a straight-through estimator, takes the copy in after making it, in the same run)
            if f is not None and f.f_code is c.line[0] and f.f_lineno == c.line[1] and 0 <= f.f_lasti <= c.lasti:
                c.fed = True
    except Exception:  # noqa: BLE001
        _internal_error("recurrent: carry")


def before_backward(roots, bw_site):
    """At a top-level backward: the copies fed back whose own graph this backward leaves out."""
    if not _cuts:
        return
    cuts = [c for c in _cuts if c.fed]
    del _cuts[:]
    taint[0] = False
    if not cuts:
        return
    try:
        nodes, _, _ = _walk([t.grad_fn for t in roots if getattr(t, "grad_fn", None) is not None], limit=20000)
        later = {}
        for n in nodes.values():
            try:
                tag = n.metadata.get(_BUILT)
            except Exception:  # noqa: BLE001
                continue
            if tag is not None and tag[0] is not None:
                key = (tag[0][0], tag[0][1])
                later[key] = max(later.get(key, -1), tag[3])
        lost = [c for c in cuts if id(c.node) not in nodes and later.get((c.line[0], c.line[1]), -1) > c.count]
        if not lost:
            return
        c = lost[0]
        if c.site is None or tuple(c.site[:2]) in _reported:
            return
        _reported.add(tuple(c.site[:2]))
        _finding(("recurrent-detach", tuple(c.site)), code="GW733", kind="state-detached-every-step",
                 severity="warning", site=c.site, backward_site=bw_site,
                 message="`.detach()` cuts a value that line %d made in this forward and feeds the copy back to it: "
                         "the graph of every earlier step is thrown away (%d cut%s before this backward), so the "
                         "backward runs through the last step only and nothing is learned across steps (detach "
                         "between sequences or chunks, after their backward, not at every step)" % (
                             c.line[1], len(lost), "" if len(lost) == 1 else "s"))
    except Exception:  # noqa: BLE001
        _internal_error("recurrent: backward")
    finally:
        for c in cuts:
            c.node = None


import torch  # noqa: E402

_Tensor = torch.Tensor
