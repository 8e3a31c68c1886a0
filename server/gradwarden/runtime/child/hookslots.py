"""Forward hooks that keep a module's output in one slot, on a module run several times per step
(GW721's premise, shown to the static diagnostic; never a finding of its own).

``self.acts[name] = output`` on a module called twice between two backward calls keeps the
second call's output only. What the run can show is that fact: the same slot (a dict entry, an
attribute) received the outputs of two calls of the same module before the step's backward.
What it cannot show is that it matters: a slot meant to hold the latest call (the last time
step of a recurrent cell, the final feature map) is written the same way, and a program that
reads the slot between the two calls never misses the first value. Telling those apart needs
the program's intent, so the run only confirms a static GW721 diagnostic made at the same
place (the event is marked ``confirm_only``: the parent drops it when nothing matches it).

Hooks registered with ``Module.register_forward_hook`` whose function is the user's are
wrapped; after each call, the slots that hold the module's output are looked for in the
places the hook can write: its closure's dicts and objects, the object it is a method of, the
module's attributes, the globals it names.
"""
import functools
import gc
import weakref

import torch

from .records import _mod_sites
from .report import _finding, _internal_error, _state
from .userfiles import _caller, _display_file, _is_user, _lined_instructions, _site, _user_frame

_Tensor = torch.Tensor
_slots = {}  # (id of container, key) -> (backward count, weakref to module, (data_ptr, shape, stride) stored, call site,
#               weakref to the value stored)
_MAX_SLOTS = 4096
_MAX_SCAN = 64  # entries looked at per container
_MAX_SCANS = 64  # overwrites whose first value is looked for in the program's other dicts
_scans = [0]


def _holders(hook, module):
    """Containers the hook may store into: (container, is a dict)."""
    seen = set()
    out = []

    def add(obj):
        if obj is None or id(obj) in seen or isinstance(obj, (_Tensor, type)) or callable(obj) and not hasattr(
                obj, "__dict__"):
            return
        seen.add(id(obj))
        if isinstance(obj, dict):
            out.append(obj)
        elif hasattr(obj, "__dict__") and not isinstance(obj, (str, bytes, int, float)):
            try:
                d = vars(obj)
            except TypeError:
                return
            out.append(d)
            for v in list(d.values())[:_MAX_SCAN]:
                if isinstance(v, dict) and id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)

    fn = hook
    while isinstance(fn, functools.partial):
        for a in fn.args:
            add(a)
        for a in (fn.keywords or {}).values():
            add(a)
        fn = fn.func
    add(getattr(fn, "__self__", None))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            add(cell.cell_contents)
        except ValueError:
            continue
    code = getattr(fn, "__code__", None)
    glb = getattr(fn, "__globals__", None)
    if code is not None and glb is not None:
        for name in code.co_names:
            v = glb.get(name)
            if isinstance(v, dict) or (v is not None and hasattr(v, "__dict__") and not callable(v)):
                add(v)
    add(module)
    return out


def _code_of(hook):
    """The code object a hook runs, through ``functools.partial`` layers and bound methods."""
    fn = hook
    for _ in range(8):
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif getattr(fn, "__code__", None) is None and getattr(fn, "__func__", None) is not None:
            fn = fn.__func__
        else:
            break
    return getattr(fn, "__code__", None)


def _store_line(hook):
    """[file, line, function] of the hook's first store into a subscript or an attribute."""
    code = _code_of(hook)
    if code is None:
        return None
    try:
        for line, ins in _lined_instructions(code):
            if ins.opname in ("STORE_SUBSCR", "STORE_ATTR"):
                return [_display_file(code.co_filename), line, code.co_name]
    except Exception:  # noqa: BLE001
        pass
    return [_display_file(code.co_filename), code.co_firstlineno, code.co_name]


def _same_memory(a, b):
    """``a`` is ``b`` or an alias of all of it (``b.detach()``, ``b.data``): same memory, same layout."""
    if a is b:
        return True
    try:
        return (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
                and a.dtype == b.dtype and a.device == b.device and a.numel() > 0)
    except Exception:  # noqa: BLE001
        return False


def _recorded(value, tensors):
    """The call's tensor (output or input) that ``value`` holds, or None."""
    if not isinstance(value, _Tensor):
        return None
    for t in tensors:
        if _same_memory(value, t):
            return t
    return None


def after_hook(hook, module, output, inputs=()):
    """After the user's forward hook: the slots that hold this call's output or inputs (the
    tensors or their detached aliases: ``module.saved = inputs[0].detach()``)."""
    if not isinstance(output, _Tensor) or _state.suspended or not torch.is_grad_enabled():
        return
    try:
        n = _state.bw_count
        call = _site(_user_frame(_caller(3)))
        tensors = [output] + [t for t in (inputs if isinstance(inputs, tuple) else ())[:4] if isinstance(t, _Tensor)]
        for d in _holders(hook, module):
            for key, value in list(d.items())[:_MAX_SCAN]:
                held = _recorded(value, tensors)
                if held is None:
                    continue
                slot = (id(d), key)
                prev = _slots.get(slot)
                # the memory the slot holds, not the tensor: a detached alias that was replaced is
                # freed with the call's own tensor, and a freed tensor's weakref tells nothing
                memory = (held.data_ptr(), tuple(held.shape), held.stride())
                _slots[slot] = (n, weakref.ref(module), memory, call, weakref.ref(value))
                if len(_slots) > _MAX_SLOTS:
                    _slots.clear()
                if prev is None or prev[0] != n or prev[1]() is not module or prev[2] == memory:
                    continue
                # the first value still sits under the same key of another dict: the program copied
                # the container before this call (`fake = dict(store)`), so nothing it meant to read
                # was lost. Looked for only here, at an overwrite, and a bounded number of times.
                first = prev[4]()
                if first is not None and _scans[0] < _MAX_SCANS:
                    _scans[0] += 1
                    if any(r is not d and type(r) is dict and "__builtins__" not in r and r.get(key, None) is first
                           for r in gc.get_referrers(first)):
                        continue
                _report(hook, module, key, prev[3], call)
    except Exception:  # noqa: BLE001
        _internal_error("hook slots")


def _report(hook, module, key, first_call, second_call):
    where = _store_line(hook)
    if where is None:
        return
    sites = []
    for s, what in ((first_call, "the first call"), (second_call, "the call that overwrites it")):
        if s is not None:
            sites.append({"kind": "call", "site": s, "message": "%s of the %s" % (what, type(module).__name__)})
    built = _mod_sites.get(module) if _mod_sites is not None else None
    if built is not None:
        sites.append({"kind": "created", "site": built, "message": "the hooked %s is built here" % type(module).__name__})
    _finding(("hook-slot", tuple(where)), code="GW721", kind="hook-overwrite", severity="warning", site=where,
             sites=sites, confirm_only=True,
             message="the forward hook stores the %s's output in `%s` on every call, and the module ran again before "
                     "the step's backward: the second call's output replaced the first one's" % (
                         type(module).__name__, key))


def _hook_function(hook):
    """The function a hook runs: the hook itself, or the bound ``__call__`` of a hook object
    (``module.register_forward_hook(self)``), whose instance is where it stores."""
    if getattr(hook, "__code__", None) is not None or isinstance(hook, functools.partial):
        return hook
    call = getattr(type(hook), "__call__", None)
    if getattr(call, "__code__", None) is None:
        return hook
    try:
        return hook.__call__
    except Exception:  # noqa: BLE001
        return hook


def install():
    Module = torch.nn.Module
    orig = Module.register_forward_hook

    def register_forward_hook(self, hook, *args, **kwargs):
        runs = _hook_function(hook)
        # a partial (``functools.partial(save, store=feats)``) or a bound method runs the user's
        # code too: its code is found through the wrapper
        code = _code_of(runs)
        if code is not None and _is_user(code.co_filename):
            user_hook = hook

            @functools.wraps(runs)
            def hook(*a, **k):
                result = user_hook(*a, **k)
                after_hook(runs, a[0], a[-1], a[1] if len(a) > 2 else ())
                return result

        return orig(self, hook, *args, **kwargs)

    register_forward_hook.__wrapped__ = orig
    Module.register_forward_hook = register_forward_hook
