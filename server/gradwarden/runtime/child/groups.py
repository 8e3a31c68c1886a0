"""Parameter groups that leave a parameter out (GW719): ``decay = [p for n, p in named if p.dim()
>= 2]``, ``no_decay = [p for n, p in named if n.endswith(".bias")]`` leaves every LayerNorm weight
in no group; backward gives it a gradient at every step and no optimizer applies it.

A parameter no optimizer holds is often meant (a frozen backbone left with ``requires_grad``, a
head-only fine-tune, BitFit's biases), so the run reports only a hole in a grouping: at a step
after a backward, a parameter with a gradient that no optimizer holds, whose own module has
another parameter this optimizer holds (the LayerNorm's bias), while a parameter of the same name
in another module is held too (the Linear layers' weights). A whole module left out, or every
parameter of a name left out, is not this.

Shown where the list that holds the sibling was made: when the optimizer is built, the lists of
tensors among the locals of the user's frame that builds it are noted with the line that bound
each (``no_decay = [...]``); else at the optimizer.
"""
import weakref

import torch

from . import optwatch as _optwatch
from . import polluted as _polluted
from .paramnames import describe, quoted
from .records import _mod_sites
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _display_file, _lined_instructions, _site, _user_frame

_Tensor = torch.Tensor
_lists = weakref.WeakKeyDictionary()  # optimizer -> [(frozenset of tensor ids, site of the binding)]
_checked = weakref.WeakKeyDictionary()  # optimizer -> (checks made, backward count at the last)
_MAX_CHECKS = 2
_MAX_MODULES = 4096
_MAX_LIST = 100000


def _bound_at(code, name, line):
    """The line of the last store into ``name`` in ``code`` at or before ``line``, else None."""
    best = None
    try:
        for cur, ins in _lined_instructions(code):
            if ins.opname in ("STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF") and ins.argval == name \
                    and cur <= line:
                best = cur
    except Exception:  # noqa: BLE001
        return None
    return best


def note_optimizer(opt, _seen):
    try:
        frame = _user_frame(_caller(2))
        if frame is None:
            return
        code = frame.f_code
        out = []
        for name, v in list(frame.f_locals.items())[:256]:
            if not isinstance(v, list) or not v or len(v) > _MAX_LIST or not isinstance(v[0], _Tensor):
                continue
            ids = frozenset(id(x) for x in v if isinstance(x, _Tensor))
            line = _bound_at(code, name, frame.f_lineno)
            if line is not None:
                out.append((ids, [_display_file(code.co_filename), line, code.co_name], name))
        if out:
            _lists[opt] = out[:32]
    except Exception:  # noqa: BLE001
        _internal_error("groups: optimizer")


def on_step(opt, args, kwargs):
    if _state.suspended or _mod_sites is None:
        return None
    try:
        done, last = _checked.get(opt, (0, -1))
        n = _state.bw_count
        if done >= _MAX_CHECKS or n == last or n == 0:
            return None
        _checked[opt] = (done + 1, n)
        _check(opt, _site(_user_frame(_caller(1))))
    except Exception:  # noqa: BLE001
        _internal_error("groups: step")
    return None


def _check(opt, step_site):
    mine = {id(p) for p in _polluted._params(opt)}
    if not mine:
        return
    held = set(mine)
    for other in list(_polluted._optimizers):
        if other is not opt:
            held.update(id(p) for p in _polluted._params(other))
    modules = []
    names_held = set()
    for m in list(_mod_sites.keys())[:_MAX_MODULES]:
        params = [(k, p) for k, p in getattr(m, "_parameters", {}).items() if isinstance(p, _Tensor)]
        if not params:
            continue
        modules.append((m, params))
        names_held.update(k for k, p in params if id(p) in mine)
    holes, siblings, attrs = [], [], []
    for m, params in modules:
        kept = [p for k, p in params if id(p) in mine]
        if not kept:
            continue
        for k, p in params:
            if id(p) in held or not p.requires_grad or p.grad is None or k not in names_held:
                continue
            if any(q is p for q in holes):
                continue
            holes.append(p)
            siblings.append(kept[0])
            if k not in attrs:
                attrs.append(k)
    if holes:
        _report(opt, holes, siblings, attrs, step_site)


def _report(opt, holes, siblings, attrs, step_site):
    name = type(opt).__name__
    site, listed = None, None
    for ids, where, var in _lists.get(opt, ()):
        if id(siblings[0]) in ids:
            site, listed = where, var
            break
    opt_site = None
    try:
        from . import untrained as _untrained
        opt_site = _untrained._opt_sites.get(opt)
    except Exception:  # noqa: BLE001
        pass
    if site is None:
        site = opt_site
    if site is None:
        return
    names = [quoted(p, describe(p)[0]) for p in holes[:3]]
    more = " and %d more" % (len(holes) - 3) if len(holes) > 3 else ""
    sib = quoted(siblings[0], describe(siblings[0])[0])
    sites = []
    if opt_site is not None and opt_site != site:
        sites.append({"kind": "optimizer", "site": opt_site, "message": "%s is given the groups here" % name})
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site, "message": "%s.step() leaves them as they are" % name})
    where = "`%s`, made here," % listed if listed else "the parameter groups"
    one = len(holes) == 1
    _finding(("groups", tuple(site), id(opt)), code="GW719", kind="untrained-parameter", severity="warning",
             site=site, sites=sites,
             message="%s%s get%s a gradient but no optimizer holds %s, so %s never train%s: %s take%s %s of the same "
                     "module, and %s's groups take the %s of other modules (make the groups cover every "
                     "parameter)" % (
                         ", ".join(names), more, "s" if one else "", "it" if one else "them", "it" if one else "they",
                         "s" if one else "", where, "s" if listed else "", sib, name,
                         ", ".join("`%s`" % a for a in attrs[:3])))


def install():
    """After polluted.install() and untrained.install() (their records are read here)."""
    _optwatch.on_build(note_optimizer)
    _optwatch.on_step(on_step)
