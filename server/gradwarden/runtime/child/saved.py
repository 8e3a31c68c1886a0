"""The saved-tensor hooks: pack records the version, unpack re-does PyTorch's version check
and names the write."""
import torch

from . import probestate as _ps
from .hidden import _silent_sites
from .records import update_routine_call
from .records import (
    SWEEP_EVERY, _Rec, _by_storage, _current_node, _make_write, _node_name, _packs, _recent, _sweep,
    _weakref, _write_sites
)
from .report import ERROR_MARK, _finding, _internal_error, _state
from .tensors import _describe, _storage_key
from .userfiles import _caller, _site, _user_frame


def _pack(t):
    try:
        return _pack_record(t)
    except Exception:  # noqa: BLE001 - never break autograd: an untracked record
        _internal_error("pack")
        r = _Rec()
        r.t = t
        r.version = None
        return r


def _pack_record(t):
    # no _finalize() here: a pack inside an in-place op (index_put_ saves its indices) comes
    # before that op's version bump; _on_write attributes its writes once the op returned
    r = _Rec()
    r.t = t
    r.version = r.last = t._version
    r.site = _site(_user_frame(_caller(2)))
    r.first = r.silent = None
    r.silent_done = False
    r.bw = _state.bw_count
    key = r.key = _storage_key(t)
    if key is not None:
        refs = _by_storage.get(key)
        if refs is None:
            _by_storage[key] = [_weakref(r)]
        else:
            refs.append(_weakref(r))
    _packs[0] += 1
    _recent.append(r)
    if _packs[0] % SWEEP_EVERY == 0:
        _sweep()
    return r


def _check_packed_during(func, packs):
    """``func`` (a call that is not in-place) saved tensors for backward: when one of them
    is already at another version when the call returns, the call itself wrote it after saving
    it (an in-place write inside torch's implementation, pytorch#162350): that write is the one
    to name if backward later finds the version moved."""
    try:
        n = min(_packs[0] - packs, len(_recent))
        w = None
        for i in range(1, n + 1):
            r = _recent[-i]
            if r.version is None or r.first is not None:
                continue
            cur = r.t._version
            if cur != r.version:
                if w is None:
                    w = _make_write(func, _caller(2))
                    w.internal = True
                r.first = w
                r.first_from = r.version
                r.first_to = r.last = cur
    except Exception:  # noqa: BLE001
        _internal_error("internal write")


def _unpack(r):
    t = r.t
    if r.version is None:
        return t
    try:
        cur = t._version
        bw = _state.cur_bw
        node = _current_node()
        if node is not None and bw is not None:
            node.metadata["_gradwarden"] = (r.site, bw[0], bw[1], bw[2])
    except Exception:  # noqa: BLE001
        _internal_error("unpack")
        return t
    if cur != r.version:
        if _ps.fresh:  # the chain-rule probe: the real backward changed what it saved
            raise _ps.ProbeAbort()
        try:
            message = _version_error(r, cur, node, bw)
        except Exception:  # noqa: BLE001
            _internal_error("version error")
            message = ("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: it is at version %d; expected version %d instead. %s" % (cur, r.version, ERROR_MARK))
        raise RuntimeError(message)
    if r.silent is not None and not r.silent_done:
        r.silent_done = True
        try:
            _silent_finding(r, node, bw)
        except Exception:  # noqa: BLE001
            _internal_error("silent finding")
    return t


def _version_error(r, cur, node, bw):
    w = r.first
    name = _node_name(node)
    desc = _describe(r.t)
    shape = "[%s [%s]]" % (desc.get("type", "tensor"), ", ".join(str(s) for s in desc.get("shape", [])))
    base = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "%s%s, is at version %d; expected version %d instead." % (
                shape, (", which is saved by " + name) if name else "", cur, r.version))
    sites = []
    routine = update_routine_call(w, bw[1] if bw else None) if w is not None else None
    if w is not None:
        code = "GW501" if w.step or routine else ("GW202" if w.in_backward else "GW201")
        wsite, extra = _write_sites(w)
        if routine is not None:
            # a parameter update routine called between the forward and this backward (a
            # hand-written weight decay under no_grad): its call is the line to move
            extra = [{"kind": "write", "site": wsite, "message": "%s writes the parameter in place" % w.op}] + extra
            wsite = routine[0]
        sites.extend(extra)
        if w.step:
            sites.append({"kind": "step", "site": w.site, "message": "%s.step() updates the parameter in place" % w.step})
        where = "%s:%s" % (wsite[0], wsite[1]) if wsite else "an unknown line"
        if w.internal:
            note = " %s the in-place write is inside torch's implementation of %s at %s" % (ERROR_MARK, w.op, where)
        else:
            note = " %s the in-place write is %s at %s" % (ERROR_MARK, w.op, where)
        if r.site:
            note += "; the tensor was saved at %s:%s" % (r.site[0], r.site[1])
        note += " (version %d -> %d)." % (r.first_from, r.first_to)
    else:
        code = "GW201"
        wsite = None
        note = " %s gradwarden did not see the in-place write (another thread, or before the run)." % ERROR_MARK
    msg = base + note
    key = ("version", code, tuple(wsite or ()), tuple(r.site or ()))
    _finding(key, code=code, kind="version-counter",
             message=_short_version_message(w, r, name, cur, routine),
             severity="error", write_site=wsite, save_site=r.site, backward_site=bw[1] if bw else None,
             save_op=name, write_op=w.op if w else None, sites=sites,
             versions={"saved": r.version, "current": cur,
                       "write_from": r.first_from if w else None, "write_to": r.first_to if w else None},
             tensor=desc, module=w.module if w else None)
    return msg


def _short_version_message(w, r, node_name, cur, routine=None):
    saver = node_name or "an autograd node"
    if routine is not None:
        return ("%s() updates in place (%s), between the forward and this backward, a parameter that %s saved "
                "for backward (saved at version %d, now %d); backward raises" % (
                    routine[1], w.op, saver, r.version, cur))
    if w is None:
        return ("a tensor that %s saved for backward was modified in place (version %d -> %d); "
                "the write was not observed" % (saver, r.version, cur))
    if w.internal:
        return ("%s writes in place, inside torch's own implementation, a tensor that %s saved for backward "
                "(saved at version %d, now %d); backward raises" % (w.op, saver, r.version, cur))
    what = "%s.step()" % w.step if w.step else w.op
    return ("in-place %s modifies a tensor that %s saved for backward (saved at version %d, now %d); "
            "backward raises" % (what, saver, r.version, cur))


def _silent_finding(r, node, bw):
    w = r.silent
    name = _node_name(node)
    wsite, extra = _write_sites(w)
    if w.step and w.fused:
        code, kind = "GW502", "fused-step"
        message = ("fused %s.step() overwrote a parameter that %s saved for backward without bumping its "
                   "version: this backward silently used the new weights" % (w.step, name or "a node"))
    else:
        code, kind = "GW601", "data-write"
        message = ("%s wrote into a tensor that %s saved for backward through an alias that does not share "
                   "its version counter (.data): this backward silently used the modified values" % (
                       w.op, name or "a node"))
    key = ("silent", code, tuple(wsite or ()), tuple(r.site or ()))
    _silent_sites.add(tuple(wsite or ()))
    _finding(key, code=code, kind=kind, message=message, severity="warning", write_site=wsite,
             save_site=r.site, backward_site=bw[1] if bw else None, save_op=name, write_op=w.op,
             sites=extra, versions={"saved": r.version, "current": r.t._version}, tensor=_describe(r.t))
