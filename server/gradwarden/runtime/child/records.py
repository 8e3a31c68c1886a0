"""What the hooks remember: saved-tensor records, writes and where they come from (the
user's line, the in-place module and where it was built or made in-place, the optimizer step)."""
from collections import deque
import os
import weakref

import torch

from . import userfiles as _uf
from .report import _state
from .userfiles import _site


_pending = []  # writes waiting for their version bump: (write, tensor, version_before, records)

_by_storage = {}  # storage base pointer -> [weakref(_Rec)]

_mod_sites = weakref.WeakKeyDictionary()  # nn.Module -> construction site
# nn.Module -> the sites of the user's frames that were calling, outward from the construction site
# (a factory `build_model()` called by the training script): the line of another function to show
_mod_callers = weakref.WeakKeyDictionary()

# torch.distributions objects -> construction site: their lazy properties (``logits``,
# ``probs``) cache a tensor, with its graph, on the object the first time they are read
_dist_sites = weakref.WeakKeyDictionary()

# node.metadata key: (site, attribute, module type) where a tensor that node made was stored as a
# plain attribute of a module (a memory, a hidden state carried across steps): when a later
# backward finds that graph freed, the store is the line to change
ATTR_STORE = "_gradwarden_attr_store"

_packs = [0]

SWEEP_EVERY = 4096


class _Rec(object):
    """One saved tensor, as packed."""

    __slots__ = ("t", "version", "site", "key", "last", "first", "first_from", "first_to", "silent",
                 "silent_done", "bw", "__weakref__")


class _Write(object):
    """One mutating op that touched the storage of a live saved tensor."""

    __slots__ = ("op", "site", "call_site", "module", "module_site", "step", "fused", "in_backward", "via",
                 "internal", "outer")


def _sweep():
    dead = []
    for key, refs in _by_storage.items():
        alive = [r for r in refs if r() is not None]
        if alive:
            if len(alive) != len(refs):
                _by_storage[key] = alive
        else:
            dead.append(key)
    for key in dead:
        del _by_storage[key]


def _live(key):
    refs = _by_storage.get(key)
    if not refs:
        return None
    out = []
    for ref in refs:
        r = ref()
        if r is not None:
            out.append(r)
    return out

_recent = deque(maxlen=64)  # the last records packed


def _node_name(node):
    try:
        return node.name() if node is not None else None
    except Exception:  # noqa: BLE001
        return None


def _write_sites(w):
    """(write site, extra sites) of a write: an in-place module called from a container is
    reported where it was built, with the call as a related site."""
    extra = []
    site = w.site
    if w.module_site is not None:
        if w.call_site is not None and w.via == "node":
            extra.append({"kind": "backward", "site": w.call_site,
                          "message": "autograd wrote while running %s for this backward" % w.module})
        elif w.call_site is not None:
            extra.append({"kind": "call", "site": w.call_site, "message": "the %s is called here" % w.module})
        site = w.module_site
    return site, extra


def _make_write(func, frame):
    """Where a write comes from: the user's frame, the in-place module doing it (and where
    that module was built), the optimizer step it is part of, a custom backward."""
    w = _Write()
    w.op = _op_name(func)
    w.step = None
    w.fused = False
    w.module = w.module_site = w.call_site = w.via = None
    w.in_backward = False
    w.internal = False
    w.outer = None
    modules = []
    f = frame
    nn_module = torch.nn.Module
    optimizer = torch.optim.Optimizer
    while f is not None:
        fn = f.f_code.co_filename
        u = _uf._ucache.get(fn)
        if u is None:
            u = _uf._USER.classify(fn)
        if u:
            break
        if ("torch" + os.sep + "nn" + os.sep) in fn or ("torch" + os.sep + "optim" + os.sep) in fn:
            try:
                owner = f.f_locals.get("self")
            except Exception:  # noqa: BLE001
                owner = None
            if owner is not None:
                if isinstance(owner, nn_module):
                    if not modules or modules[-1] is not owner:
                        modules.append(owner)
                elif isinstance(owner, optimizer) and w.step is None:
                    w.step = type(owner).__name__
                    w.fused = _is_fused(owner)
        f = f.f_back
    w.site = _site(f)
    bw = _state.cur_bw
    if bw is not None and w.site is not None and bw[1] is not None and w.site[:2] == bw[1][:2]:
        # autograd itself is writing while it runs a node's backward: the place to show is the
        # forward op that built that node (tagged when it unpacked its saved tensors)
        try:
            node = _current_node()
            tag = node.metadata.get("_gradwarden") if node is not None else None
        except Exception:  # noqa: BLE001
            tag = None
        if tag is not None and tag[0] is not None:
            w.call_site = w.site
            w.module_site = tag[0]
            w.module = _node_name(node)
            w.via = "node"
    if f is not None and f.f_code.co_name == "backward":
        try:
            w.in_backward = "ctx" in f.f_code.co_varnames[: f.f_code.co_argcount]
        except Exception:  # noqa: BLE001
            pass
    if modules and w.module_site is None:
        inner = modules[0]
        w.module = type(inner).__name__
        if len(modules) > 1:
            # called by a container (Sequential ...): the user's line is the container call;
            # the module's own construction is where `inplace=True` was chosen
            built = _built_site(inner)
            if built is not None:
                w.module_site = built
                w.call_site = w.site
                w.via = "module"
    return w


def note_update_routine(w, frame):
    """A leaf that requires grad (a parameter) written under ``no_grad`` by user code: remember
    the user frames the write ran in (innermost first, as (site, code)), so that a backward
    that then raises can show the call of the update routine (a hand-written weight decay, an
    EMA update) made in the function that runs the backward, as the static engine does
    (GW501 at the call)."""
    if w.step is not None or w.in_backward or w.module_site is not None or w.outer is not None:
        return
    out = []
    f = frame
    while f is not None and len(out) < 12:
        fn = f.f_code.co_filename
        u = _uf._ucache.get(fn)
        if u is None:
            u = _uf._USER.classify(fn)
        if u:
            out.append((_site(f), f.f_code))
        f = f.f_back
    if len(out) > 1:
        w.outer = out


def _code_has_line(code, line):
    try:
        return any(ln == line for _s, _e, ln in code.co_lines())
    except Exception:  # noqa: BLE001
        return False


def update_routine_call(w, backward_site):
    """(call site, routine name) when the write ``w`` ran inside a function that the function
    running the backward at ``backward_site`` called (the routine is then the line to move),
    else None: a write made by that function itself is shown where it is."""
    if not w.outer or not backward_site:
        return None
    for i in range(1, len(w.outer)):
        site, code = w.outer[i]
        if site is None or site[0] != backward_site[0] or code.co_name != backward_site[2]:
            continue
        if _code_has_line(code, backward_site[1]):
            return site, w.outer[i - 1][1].co_name
        return None
    return None


def _is_fused(opt):
    try:
        if opt.defaults.get("fused"):
            return True
        return any(g.get("fused") for g in opt.param_groups)
    except Exception:  # noqa: BLE001
        return False

_inplace_sites = weakref.WeakKeyDictionary()  # nn.Module -> where ``module.inplace = True`` was set after construction


def _built_site(module):
    """Where ``module`` was made in-place: the ``inplace = True`` assignment, else its construction."""
    site = _inplace_sites.get(module) if _inplace_sites is not None else None
    if site is None and _mod_sites is not None:
        site = _mod_sites.get(module)
    return site

_op_names = {}


def _op_name(func):
    """``Tensor.add_``, ``torch.relu_``, ``torch.nn.functional.relu``: the call as the user wrote it."""
    try:
        out = _op_names.get(func)
    except TypeError:
        out = None
    if out is not None:
        return out
    name = getattr(func, "__name__", None) or str(func)
    if getattr(func, "__objclass__", None) is not None:
        out = "Tensor." + name
    else:
        module = getattr(func, "__module__", None) or ""
        if module.startswith("torch._C") or module in ("torch", "torch.functional"):
            module = "torch"
        out = "%s.%s" % (module, name) if module else name
    try:
        _op_names[func] = out
    except TypeError:
        pass
    return out

_current_node = getattr(torch._C, "_current_autograd_node", lambda: None)

_weakref = weakref.ref
