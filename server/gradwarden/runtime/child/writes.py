"""In-place calls: which tensors a call writes, the writes to saved tensors pending their
version bump, errors raised by a write, writes into expanded tensors and grad_output."""
import torch

from . import overlap as _overlap
from . import probestate as _ps
from .chainrule import check_write as _probe_check_write
from .graphtags import _built_count
from .hidden import _aliases, _check_hidden_write, _leaf_writes
from .records import note_update_routine as _note_update_routine
from .records import _by_storage, _live, _make_write, _op_name, _pending, _weakref, _write_sites
from .report import _classify_message, _finding, _internal_error, _mark, _raised, _report_error
from .tensors import _describe, _internal_overlap, _overlaps, _storage_key, tensor_registry
from .userfiles import _caller, _is_user, _site, _user_frame

_Tensor = torch.Tensor


_grad_outputs = []  # stack of sets: storage keys of the grad_outputs of running custom backwards

_data_sites = tensor_registry()  # tensor -> site where .data was set to an overlapping tensor


def _on_write(func, kind, args, kwargs):
    if _ps.fresh:  # the chain-rule probe runs: it may write only what it made
        _probe_check_write(_function_targets(kind, args, kwargs))
    go_hit = False
    targets = ()
    overlap = None
    try:
        targets = _function_targets(kind, args, kwargs)
        go_hit = _before_write(func, targets)
        if kind == 1 and len(targets) == 1 and args[0] is targets[0]:
            overlap = _overlap.before_write(func, args, kwargs, targets[0])
    except Exception:  # noqa: BLE001 - a bug of ours must never break the user's program
        _internal_error("write")
    try:
        out = func(*args, **kwargs) if kwargs else func(*args)
    except (RuntimeError, ValueError) as exc:
        del _pending[:]
        try:
            _write_error(exc, func, targets, go_hit)
        except Exception:  # noqa: BLE001
            _internal_error("write error")
        raise
    # above autograd, the version bump has happened: attribute the write now
    if _pending:
        _finalize()
    if overlap is not None:
        _overlap.after_write(overlap)
    if go_hit and go_hit is not True:
        try:
            _grad_output_finding(func, severity="warning", reason=go_hit)
        except Exception:  # noqa: BLE001
            _internal_error("grad_output")
    elif _expanded and targets:
        try:
            _check_expanded_write(func, targets)
        except Exception:  # noqa: BLE001
            _internal_error("expanded write")
    return out


def _before_write(func, targets):
    """Queue the writes that touch live saved tensors; True when one writes a grad_output."""
    hits = None
    go_hit = False
    write = None
    for t in targets:
        key = _storage_key(t)
        if key is None:
            continue
        if _by_storage:
            live = _live(key)
            if live:
                if write is None:
                    write = _make_write(func, _caller(3))
                if t.is_leaf and t.requires_grad and not torch.is_grad_enabled():
                    _note_update_routine(write, _caller(3))
                if hits is None:
                    hits = []
                hits.append((write, t, t._version, live))
        if _grad_outputs:
            reason = _grad_outputs[-1].get(key, False)
            if reason is not False:
                go_hit = reason or True
                if reason is None:  # a private buffer, unless autograd also hands it to another node
                    writes = _grad_outputs[-1].setdefault("writes", {})
                    if key not in writes:
                        writes[key] = _write_sites(_make_write(func, _caller(3)))[0]
    if len(targets) == 1 and not go_hit:
        _check_expanded_base(func, targets[0])
    if _aliases:
        for t in targets:
            _check_hidden_write(func, t)
    if _leaf_writes is not None:
        site = None
        for t in targets:
            if t.requires_grad and t.is_leaf:
                if site is None:
                    site = _write_sites(_make_write(func, _caller(3)))
                _leaf_writes[t] = (_built_count[0], site[0])
    if hits:
        _pending.extend(hits)
    return go_hit


def _finalize():
    """Attribute the pending writes now that their version bump happened."""
    items = list(_pending)
    del _pending[:]
    for w, t, before, live in items:
        try:
            moved_self = t._version != before
        except Exception:  # noqa: BLE001
            moved_self = True
        for r in live:
            cur = r.t._version
            if cur != r.last:
                if r.first is None and r.last == r.version:
                    r.first = w
                    r.first_from = r.last
                    r.first_to = cur
                r.last = cur
            elif r.silent is None and r.first is None:
                # the storage changed but this saved tensor's counter did not move
                if moved_self:
                    # written through an alias with its own counter (.data, from_blob ...)
                    if _overlaps(r.t, t):
                        r.silent = w
                elif w.step and w.fused:
                    # a kernel that does not bump versions (fused optimizers); other such
                    # kernels (batch norm's running stats) are harmless by design
                    if _overlaps(r.t, t):
                        r.silent = w


def note_nograd_view(out):
    """The mode, under no_grad: ``out`` is a view (``diag = scores.diagonal()`` in a ``no_grad``
    block) made by the user's code itself (the caller's frame: no walk up the stack, so views made
    inside libraries cost a dictionary lookup); where it was made is remembered, since writing it in
    place with grad on later raises at the write, while the fix moves the view."""
    try:
        f = _caller(2)
        if _nograd_views is not None and f is not None and _is_user(f.f_code.co_filename):
            _nograd_views[out] = _site(f)
    except Exception:  # noqa: BLE001
        pass


def _nograd_view_sites(targets):
    for t in targets:
        site = _nograd_views.get(t) if _nograd_views is not None and isinstance(t, _Tensor) else None
        if site is not None:
            return [{"kind": "created", "site": site, "message": "the view is made here, under no_grad"}]
    return []


def _write_error(exc, func, targets, grad_output):
    msg = str(exc)
    kind = _classify_message(msg)
    if kind is None:
        # the parent maps it to a rule (rules/messages.py), e.g. a view made under no_grad
        # written with grad on, detach_() of a view
        sites = _nograd_view_sites(targets) if "no_grad mode" in msg else []
        _raised(exc, _site(_user_frame(_caller(2))), sites=sites)
        _mark(exc)
        return
    f = _user_frame(_caller(2))
    w = _make_write(func, _caller(2))
    site, extra = _write_sites(w)
    code = kind[0]
    sites = list(extra)
    if code == "GW301":
        if grad_output:
            code = "GW303"
        else:
            for t in targets:
                cause = _data_sites.get(t) if _data_sites is not None else None
                if cause is not None:
                    code = "GW304"
                    sites.append({"kind": "write", "site": site, "message": "the write that fails"})
                    sites.append({"kind": "created", "site": cause,
                                  "message": ".data replaced by an expanded tensor here"})
                    site = cause
                    break
                made = _expand_made.get(t) if _expand_made is not None else None
                if made is not None:
                    sites.append({"kind": "created", "site": made[0],
                                  "message": "the expanded tensor written into was made here"})
                    if not (id(f) == made[1] and f is not None and f.f_code is made[2]):
                        # made in another call (a buffer built in __init__, written in forward):
                        # the expand is the line to change, the write is where it fails
                        sites.append({"kind": "write", "site": site, "message": "the write that fails"})
                        site = made[0]
                    break
    _mark(exc)
    _report_error(code, kind[1], msg, site or _site(f), sites, write_op=_op_name(func))

_nograd_views = tensor_registry()  # views of tensors that require grad made under no_grad -> site
_expanded = {}  # id(tensor) -> weakref: expands of tensors that require grad, and views of those
_whole = set()  # ids in _expanded that are an expand's own output (not a view taken of it)
# writes of one value into every element: into a whole expanded tensor they give every broadcast
# position that value, which is what the program asked for (torch allows them: issue 24's G229)
_FILLS = frozenset(("fill_", "zero_"))

_expand_made = tensor_registry()  # expanded tensor -> (site, id of the frame, code) where expand made it

_expand_funcs = set()


def _track_views(func, args, kwargs):
    """Run a non-mutating op while expanded tensors that require grad are alive: remember the
    expands and the views taken of them (a later write into one element changes them all)."""
    out = func(*args, **kwargs) if kwargs else func(*args)
    try:
        src = args[0] if args else None
        if not isinstance(src, _Tensor):
            return out
        if func in _expand_funcs:
            if _expand_made is not None and isinstance(out, _Tensor) and _internal_overlap(out):
                f = _user_frame(_caller(2))
                if f is not None:
                    _expand_made[out] = (_site(f), id(f), f.f_code)
            if src.requires_grad and isinstance(out, _Tensor) and _internal_overlap(out):
                _expanded[id(out)] = _weakref(out)
                _whole.add(id(out))
                if len(_expanded) > 4096:
                    _sweep_expanded()
        else:
            ref = _expanded.get(id(src))
            if ref is not None and ref() is src:
                base = src._base if src._base is not None else src
                for o in (out if isinstance(out, (tuple, list)) else (out,)):
                    if isinstance(o, _Tensor) and o._base is base:
                        _expanded[id(o)] = _weakref(o)
                        _whole.discard(id(o))
    except Exception:  # noqa: BLE001
        _internal_error("views")
    return out


def _sweep_expanded():
    for key in [k for k, ref in _expanded.items() if ref() is None]:
        del _expanded[key]
        _whole.discard(key)


def _check_expanded_write(func, targets):
    for t in targets:
        ref = _expanded.get(id(t))
        if ref is not None and ref() is t:
            if id(t) in _whole and getattr(func, "__name__", "") in _FILLS:
                continue
            w = _make_write(func, _caller(3))
            site, extra = _write_sites(w)
            _finding(("expanded-view", tuple(site or ())), code="GW301", kind="expanded-write", severity="warning",
                     message="in-place %s writes into (a view of) an expanded tensor: the element it writes stands "
                             "for every broadcast position, so all of them change (values and gradients are "
                             "silently wrong)" % _op_name(func),
                     write_site=site, sites=extra, write_op=_op_name(func), tensor=_describe(t))
            return


def _check_expanded_base(func, t):
    """A write into one element of an expanded tensor that requires grad: every position that
    shares the element changes (silently wrong values and gradients)."""
    try:
        base = t._base
        if base is None or not base.requires_grad or not _internal_overlap(base):
            return
    except Exception:  # noqa: BLE001
        return
    w = _make_write(func, _caller(3))
    site, extra = _write_sites(w)
    _finding(("expanded-base", tuple(site or ())), code="GW301", kind="expanded-write", severity="warning",
             message="in-place %s writes into a view of an expanded tensor: one element is shared by several "
                     "positions, so all of them change (values and gradients are silently wrong)" % _op_name(func),
             write_site=site, sites=extra, write_op=_op_name(func), tensor=_describe(base))


def _grad_output_finding(func, severity, reason=None):
    w = _make_write(func, _caller(3))
    site, extra = _write_sites(w)
    why = {"expanded": "it is an expanded tensor: one element stands for many, so all of them change",
           "user": "it is the caller's own tensor (grad_tensors/grad_outputs), which the write changes"}.get(
        reason, "the gradient buffer may be shared with other consumers")
    _finding(("grad-output", tuple(site or ())), code="GW303", kind="grad-output-write", severity=severity,
             message="custom Function backward writes into grad_output in place (%s): %s" % (_op_name(func), why),
             write_site=site, sites=extra, write_op=_op_name(func))

# Tensor methods whose name ends in "_" that do not write data (no version bump)
# calls named like in-place ops that write no element: a flag (``requires_grad_`` moves no version:
# `feats.detach().requires_grad_()` makes a probe leaf, it does not write `feats`), a name, a storage
# placement
_NOT_WRITES = frozenset(("share_memory_", "retain_grad", "record_stream", "rename_", "pin_memory_",
                         "_fix_weakref", "_coalesced_", "requires_grad_"))

_INPLACE_DUNDERS = frozenset(("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                              "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                              "__irshift__", "__imatmul__"))

_write_kind = {}  # torch function -> 0 (reads only), 1 (writes its first argument), 2 (writes every argument)


def _kind_of_function(func):
    name = getattr(func, "__name__", "") or ""
    if name in _INPLACE_DUNDERS:
        kind = 1
    elif name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES:
        # fused optimizer kernels write several lists (params, moments ...)
        kind = 2 if name.startswith("_fused_") else 1
    else:
        kind = 0
    try:
        _write_kind[func] = kind
    except TypeError:  # unhashable callable
        pass
    return kind


def _function_targets(kind, args, kwargs):
    """The tensors a call writes: its first argument (in-place methods, ``inplace=True``), every
    tensor argument (fused kernels), and ``out=``."""
    T = _Tensor
    out = []
    if kind == 2:
        for a in args:
            if isinstance(a, T):
                out.append(a)
            elif isinstance(a, (list, tuple)):
                out.extend(x for x in a if isinstance(x, T))
    elif kind == 1 and args:
        a = args[0]
        if isinstance(a, T):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, T))
    if kwargs:
        o = kwargs.get("out")
        if isinstance(o, T):
            out.append(o)
        elif isinstance(o, (list, tuple)):
            out.extend(x for x in o if isinstance(x, T))
    return out
