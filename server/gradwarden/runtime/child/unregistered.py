"""Layers kept in a plain Python container that the module never registers (GW719).

``self.blocks = [nn.Linear(8, 8) for _ in range(n)]`` in ``__init__`` (or ``self.heads = {}`` filled
there): ``nn.Module.__setattr__`` registers modules and parameters stored as attributes, not the
items of a ``list``/``tuple``/``dict``, so ``model.parameters()`` never yields them and an optimizer
built over it never steps them, while ``forward`` calls them and backward fills their ``.grad``.
Nothing raises; those layers stay at their initial weights (``nn.ModuleList``/``nn.ModuleDict``/
``nn.ParameterList`` was meant).

The run proves it without intent when all of these hold, at an optimizer's step after a backward:

- the container was stored as an attribute of a module by the program's code, and its items are
  modules (or bare parameters) whose parameters require grad; a module item was built by the same
  function of the program that stored the container (the owner's ``__init__``: a module made
  elsewhere and kept out of the registry on purpose, a teacher hidden in a list, is not this);
- an optimizer holds other parameters of the owner (it is trained through ``model.parameters()``);
- backward gave the items' parameters a gradient, and no optimizer holds them.

Shown at the store of the container (the line the fix changes), with the optimizer and the step.
"""
import weakref

import torch

from . import records as _records
from .report import _finding, _internal_error, _state

_MAX = 32
_MAX_ITEMS = 64
_COMPREHENSIONS = frozenset(("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"))

# [weakref(owner), attribute name, the container (the owner holds it too), store site]
_stores = []


def _items(value):
    vals = value.values() if isinstance(value, dict) else value
    out = []
    for v in list(vals)[:_MAX_ITEMS]:
        if isinstance(v, (torch.nn.Module, torch.nn.Parameter)):
            out.append(v)
    return out


def note_store(owner, name, value, site):
    """``owner.name = value`` made by the program (``value`` a list, tuple or dict): remember it
    while it may hold modules (an empty list is filled by ``append`` later)."""
    if len(_stores) >= _MAX or site is None:
        return
    try:
        if len(value) > _MAX_ITEMS or (len(value) and not _items(value)):
            return
        _stores.append([weakref.ref(owner), name, value, site])
    except Exception:  # noqa: BLE001
        _internal_error("unregistered: store")


def _made_by_store(item, site):
    if isinstance(item, torch.nn.Parameter):
        return True
    built = _records._mod_sites.get(item) if _records._mod_sites is not None else None
    # built in the function that stored the container, or in a comprehension (its own frame) of it
    return built is not None and built[0] == site[0] and (built[2] == site[2] or built[2] in _COMPREHENSIONS)


def check(opt, step_site, held, optimizer_site):
    """At a step of ``opt`` after a backward (``held(p)``: does some optimizer hold ``p``)."""
    keep = []
    for entry in _stores:
        owner, name, value, site = entry[0](), entry[1], entry[2], entry[3]
        try:
            if owner is None or owner.__dict__.get(name) is not value:
                continue  # replaced or gone
            items = _items(value)
            keep.append(entry)
            if not items or not all(_made_by_store(m, site) for m in items):
                continue
            params, seen = [], set()
            for m in items:
                for p in ([m] if isinstance(m, torch.nn.Parameter) else m.parameters()):
                    if p.requires_grad and id(p) not in seen:
                        seen.add(id(p))
                        params.append(p)
            if not params or any(held(p) for p in params):
                continue
            got = [p for p in params if p.grad is not None]
            if not got:
                continue  # no loss reached them yet
            if not any(held(q) for q in owner.parameters()):
                continue  # the owner is trained by no optimizer: nothing to compare with
            keep.pop()
            _report(owner, name, value, site, got, opt, step_site, optimizer_site)
        except Exception:  # noqa: BLE001
            _internal_error("unregistered: check")
    _stores[:] = keep


def _report(owner, name, value, site, got, opt, step_site, optimizer_site):
    kind = type(value).__name__
    meant = {"dict": "nn.ModuleDict"}.get(kind, "nn.ModuleList")
    if all(isinstance(m, torch.nn.Parameter) for m in _items(value)):
        meant = "nn.ParameterDict" if kind == "dict" else "nn.ParameterList"
    ids = {id(p) for p in got}
    pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
    names = []
    for key, m in pairs[:_MAX_ITEMS]:
        if not isinstance(m, (torch.nn.Module, torch.nn.Parameter)):
            continue
        for pname, p in ([("", m)] if isinstance(m, torch.nn.Parameter) else m.named_parameters()):
            if id(p) in ids and len(names) < 3:
                names.append("`%s[%r]%s`" % (name, key, "." + pname if pname else ""))
    more = " and %d more" % (len(got) - 3) if len(got) > 3 else ""
    sites = []
    if optimizer_site is not None:
        sites.append({"kind": "optimizer", "site": optimizer_site,
                      "message": "%s is built over `%s.parameters()`, which never yields them" % (
                          type(opt).__name__, type(owner).__name__)})
    if step_site is not None:
        sites.append({"kind": "step", "site": step_site,
                      "message": "%s.step() steps the other parameters, not these" % type(opt).__name__})
    _finding(("unregistered", tuple(site)), code="GW719", kind="untrained-parameter", severity="warning",
             site=site, sites=sites,
             message="`%s` keeps its layers in a plain Python %s, which `nn.Module` does not register: backward "
                     "gives %s%s a gradient, but `parameters()` never yields them and no optimizer holds them, so "
                     "they keep their initial values (use `%s`)" % (name, kind, ", ".join(names), more, meant))
