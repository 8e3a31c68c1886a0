"""The wrappers of torch.autograd.backward and torch.autograd.grad."""
import time

import torch

from .freed import _freed_graph, _remember_roots
from . import gradmode as _gradmode
from . import nonfinite as _nonfinite
from . import nullsteps as _nullsteps
from . import polluted as _polluted
from . import probestate as _ps
from . import recurrent as _recurrent
from . import samples as _samples
from . import untrained as _untrained
from . import zerograd as _zerograd
from .hidden import (
    _check_hidden_uses, _check_stale_graph, _emit_hidden, _grad_watch, _hidden, _hidden_found,
    _stale_found, _unwatch_grads
)
from .records import _pending, _sweep
from .report import _emit, _finding, _mark, _flush_lines, _internal_error, _state, _stop
from .tensors import _storage_key
from .userfiles import _caller, _site, _user_frame
from .writes import _expanded, _finalize, _sweep_expanded

_Tensor = torch.Tensor


def _roots(args, kwargs, name):
    value = kwargs.get(name) if name in kwargs else (args[0] if args else None)
    if value is None:
        return []
    if isinstance(value, _Tensor):
        return [value]
    try:
        return [v for v in value if isinstance(v, _Tensor)]
    except TypeError:
        return []


def _wrap_backward(orig, kind):
    retain_pos = 2 if kind == "backward" else 3
    create_pos = 3 if kind == "backward" else 4
    roots_name = "tensors" if kind == "backward" else "outputs"
    grads_name = "grad_tensors" if kind == "backward" else "grad_outputs"
    grads_pos = 1 if kind == "backward" else 2

    def wrapper(*args, **kwargs):
        st = _state
        if _ps.fresh:  # the chain-rule probe of a custom backward: no nested backward
            raise _ps.ProbeAbort()
        if st.suspended:  # Dynamo/AOTAutograd tracing a compiled region
            return orig(*args, **kwargs)
        top = st.bw_depth == 0
        if top and st.max_steps is not None and st.bw_count >= st.max_steps:
            _stop("max-steps")
        if _pending:
            _finalize()
        if top and st.retained:
            try:
                _check_stale_graph([t.grad_fn for t in _roots(args, kwargs, roots_name) if t.grad_fn is not None],
                                   _site(_user_frame(_caller(1))))
            except Exception:  # noqa: BLE001
                _internal_error("stale graph")
        if _hidden and top:
            try:
                _check_hidden_uses(_roots(args, kwargs, roots_name), _site(_user_frame(_caller(1))))
            except Exception:  # noqa: BLE001
                _internal_error("hidden write")
        retain = kwargs.get("retain_graph", args[retain_pos] if len(args) > retain_pos else None)
        create = kwargs.get("create_graph", args[create_pos] if len(args) > create_pos else False)
        if retain is None:
            retain = bool(create)
        site = _site(_user_frame(_caller(1)))
        # grad mode left off by a statement: the raise that follows is reported at the switch
        off_reported = top and _gradmode._off[0] is not None and \
            _gradmode.before_backward(_roots(args, kwargs, roots_name), site)
        grads = kwargs.get(grads_name, args[grads_pos] if len(args) > grads_pos else None)
        saved_user = st.user_grads
        if grads is not None:
            st.user_grads = set(saved_user)
            for g in ([grads] if isinstance(grads, _Tensor) else (grads if isinstance(grads, (list, tuple)) else ())):
                if isinstance(g, _Tensor):
                    k = _storage_key(g)
                    if k is not None:
                        st.user_grads.add(k)
        if top:
            st.bw_count += 1
            st.last_bw_site = site
            if retain:
                st.retained = True
            else:
                try:
                    _remember_roots(st.bw_count, _roots(args, kwargs, roots_name))
                except Exception:  # noqa: BLE001
                    _internal_error("roots")
        prev = st.cur_bw
        prev_roots = st.cur_roots
        st.cur_bw = (st.bw_count, site, bool(retain))
        st.cur_roots = None
        try:
            st.cur_roots = [t.grad_fn for t in _roots(args, kwargs, roots_name) if t.grad_fn is not None]
        except Exception:  # noqa: BLE001
            pass
        follow_grads = top and kind == "backward"  # autograd.grad fills no .grad
        if follow_grads:
            _polluted.before_backward()
        if top:
            if _samples._marked[0]:
                _samples.before_backward(_roots(args, kwargs, roots_name), site)
            if _recurrent._cuts:
                _recurrent.before_backward(_roots(args, kwargs, roots_name), site)
            _nonfinite.before_backward()
            _untrained.before_backward(_roots(args, kwargs, roots_name))
            if _nullsteps.active[0]:
                _nullsteps.before_backward(_roots(args, kwargs, roots_name))
        st.bw_depth += 1
        try:
            out = orig(*args, **kwargs)
            if follow_grads:
                _polluted.after_backward(st.bw_count, _roots(args, kwargs, roots_name), site)
            if top:
                _nonfinite.after_backward(kind, _roots(args, kwargs, roots_name), out, site)
                if _zerograd.seen[0]:
                    _zerograd.after_backward(kind, _roots(args, kwargs, roots_name),
                                             _roots(args[1:], kwargs, "inputs") if kind == "grad" else (), out,
                                             site, _untrained.optimizer_of)
                if follow_grads:
                    _zerograd.watch_parameters(_untrained.optimizer_params)
            if top and _stale_found:
                for fields in list(_stale_found):
                    leaf = fields.pop("leaf", None)
                    # the stale gradient goes into the updated leaf's .grad: it matters when an
                    # optimizer steps with it (said then), not when it is cleared first
                    if not (follow_grads and leaf is not None and _polluted.defer_stale(leaf, st.bw_count, fields)):
                        _finding(fields.pop("key"), **fields)
            return out
        except RuntimeError as exc:
            if off_reported:
                _mark(exc)
            if "backward through the graph a second time" in str(exc) and not getattr(exc, "_gradwarden_reported", 0):
                try:
                    _freed_graph(exc, _roots(args, kwargs, roots_name), site, st.cur_bw[0])
                except Exception:  # noqa: BLE001
                    _internal_error("freed graph")
            raise
        finally:
            st.bw_depth -= 1
            st.cur_bw = prev
            st.cur_roots = prev_roots
            st.user_grads = saved_user
            if top:
                del _stale_found[:]
                if _grad_watch:
                    _unwatch_grads()
                if _hidden_found:
                    _emit_hidden()
                _sweep()
                if _expanded:
                    _sweep_expanded()
                now = time.time()
                if now - st.last_progress > 0.25 or st.bw_count == 1:
                    st.last_progress = now
                    _flush_lines()
                    _emit("backward", n=st.bw_count, site=site)

    wrapper.__name__ = getattr(orig, "__name__", kind)
    wrapper.__qualname__ = getattr(orig, "__qualname__", kind)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper.__wrapped__ = orig
    return wrapper
