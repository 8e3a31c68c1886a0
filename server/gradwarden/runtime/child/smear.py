"""A shift written as a loop in the wrong order (GW713): ``for t in range(1, T): x[:, t] = x[:, t - 1]``.

Each write copies one slot of a tensor into its neighbour, and the slots are distinct: no write
overlaps itself, and PyTorch has nothing to refuse. Run in ascending order, every write reads the
slot the previous one just wrote, so after the loop every slot holds the first one's values (the
delayed features are all frame 0). The run follows such copies from one line into the same
storage: a write whose source is exactly the previous write's destination, one slot further by
the same step, continues a chain. When a chain has copied into every slot of that dimension after
the first, one slot's values were smeared over the whole dimension and nothing else was left:
reported at the loop whose order the fix reverses (the write as a note). A forward fill that
copies only where values are missing, or a shift run from the end, never completes a chain.
"""

from .report import _finding, _internal_error
from .userfiles import _caller, _display_file, _lined_instructions, _site, _user_frame

_chains = {}  # (storage key, code, line) -> [last destination offset, step, length, shape, stride]
_MAX_CHAINS = 256


def after_disjoint_copy(key, dest, src, target, depth=3):
    """A write of ``src`` into ``dest``, both views of the storage ``key`` that share no element."""
    try:
        if dest.shape != src.shape or dest.stride() != src.stride():
            _chains.clear() if len(_chains) > _MAX_CHAINS else None
            return
        frame = _user_frame(_caller(depth))
        if frame is None:
            return
        where = (key, frame.f_code, frame.f_lineno)
        d_off, s_off = dest.storage_offset(), src.storage_offset()
        step = d_off - s_off
        prev = _chains.get(where)
        shape, stride = tuple(dest.shape), dest.stride()
        if prev is not None and prev[0] == s_off and prev[1] == step and prev[3] == shape and prev[4] == stride:
            prev[0] = d_off
            prev[2] += 1
        else:
            if len(_chains) > _MAX_CHAINS:
                _chains.clear()
            prev = _chains[where] = [d_off, step, 1, shape, stride]
        size = _size_along(target, abs(step))
        if size is not None and size > 2 and prev[2] == size - 1:
            _report(frame)
    except Exception:  # noqa: BLE001
        _internal_error("smear")


def _size_along(t, step):
    """The size of the dimension of ``t`` whose stride is ``step`` (None: none, or several)."""
    dims = [i for i, s in enumerate(t.stride()) if s == step and t.shape[i] > 1]
    return t.shape[dims[0]] if len(dims) == 1 else None


def _loop_line(frame):
    """The line of the innermost ``for`` loop of ``frame``'s code around the running instruction."""
    code, at = frame.f_code, frame.f_lasti
    best = None
    try:
        for line, ins in _lined_instructions(code):
            if ins.opname == "FOR_ITER" and isinstance(ins.argval, int) and ins.offset < at < ins.argval:
                best = line
    except Exception:  # noqa: BLE001
        return None
    return best


def _report(frame):
    write = _site(frame)
    loop = _loop_line(frame)
    site = [_display_file(frame.f_code.co_filename), loop, frame.f_code.co_name] if loop else write
    sites = [{"kind": "write", "site": write, "message": "each write copies the slot the previous one just wrote"}] \
        if loop else []
    _finding(("smear", tuple(site)), code="GW713", kind="overlapping-write", severity="warning", site=site,
             sites=sites,
             message="this loop shifts a tensor one slot at a time in the order that reads what it has just written: "
                     "every write copies the slot the previous one filled, so after the loop every slot holds the "
                     "first one's values (run the loop from the end, or shift in one write of the whole slice, "
                     "from a `.clone()`)")
