"""Steps whose gradients the program itself made meaningless before the optimizer saw them:
clipping with a bound of 0 (GW743, the static rule's code), and a ``GradScaler`` that unscales gradients it never scaled
(GW736). Both are proven by the run without knowing what the program meant: no program clips to
zero on purpose, and a scaler divides by its scale what ``scaler.scale(loss)`` multiplied.

- **Clipped to zero.** ``clip_grad_norm_(params, max_norm=0)`` scales every gradient by
  ``0 / (norm + eps)``; ``clip_grad_value_(params, 0)`` clamps each one into ``[0, 0]``. Often a
  configuration's "0 = off" handed straight to the call. Seen at the call: the bound is exactly 0,
  some gradient was non-zero before it and every one is zero after it; reported at the second
  backward whose gradients the same line zeroed (the optimizer then steps with zeros: only weight
  decay moves the weights).
- **Unscaled gradients.** ``scaler.scale(loss); loss.backward()`` where
  ``scaler.scale(loss).backward()`` was meant, then ``scaler.step(opt)`` (or
  ``scaler.unscale_(opt)``): the scaler divides gradients that were never multiplied by its scale
  (``get_scale()``, 65536 by default), so every update is that many times too small (torch raises
  only when ``scale()`` never ran at all). Proven when an enabled scaler whose scale is not 1
  unscales an optimizer with gradients at a step, and none of the backward calls since its previous
  step started from (or a few nodes above) a tensor its ``scale()`` returned — at two steps. Shown
  at the backward, with the scaler's step.
"""
import weakref

import torch

from .report import _finding, _internal_error, _state
from .userfiles import _caller, _site, _user_frame

_Tensor = torch.Tensor

_zeroed = {}  # clip call site key -> set of backward numbers whose gradients it zeroed
_scaled = weakref.WeakKeyDictionary()  # scaler -> backward count at its last scale() call
_stepped = weakref.WeakKeyDictionary()  # scaler -> backward count at its last unscale/step check
_unscaled = weakref.WeakKeyDictionary()  # scaler -> [backward sites] of steps with unscaled gradients


def _bound_is_zero(value):
    try:
        if isinstance(value, bool):
            return False
        if isinstance(value, (int, float)):
            return value == 0
        if isinstance(value, _Tensor) and value.numel() == 1 and not value.is_cuda:
            return bool(value == 0)
    except Exception:  # noqa: BLE001
        return False
    return False


def _clip_wrapper(orig, name, bound_name):
    def wrapper(parameters, *args, **kwargs):
        bound = args[0] if args else kwargs.get(bound_name)
        if _state.suspended or not _state.bw_count or not _bound_is_zero(bound):
            return orig(parameters, *args, **kwargs)
        if isinstance(parameters, _Tensor):
            params = [parameters]
        else:
            parameters = params = list(parameters)
        before = False
        try:
            before = any(p.grad is not None and bool(p.grad.ne(0).any()) for p in params)
        except Exception:  # noqa: BLE001
            before = False
        out = orig(parameters, *args, **kwargs)
        if before:
            try:
                after = all(p.grad is None or not bool(p.grad.ne(0).any()) for p in params)
                if after:
                    _note_zeroed(name, bound_name, len(params))
            except Exception:  # noqa: BLE001
                _internal_error("null steps: clip")
        return out

    wrapper.__wrapped__ = orig
    wrapper.__name__ = orig.__name__
    wrapper.__doc__ = orig.__doc__
    return wrapper


def _note_zeroed(name, bound_name, count):
    site = _site(_user_frame(_caller(1)))
    if site is None:
        return
    key = tuple(site[:2])
    seen = _zeroed.setdefault(key, set())
    seen.add(_state.bw_count)
    if len(seen) < 2:
        return
    bw = _state.last_bw_site
    sites = [{"kind": "backward", "site": bw, "message": "its gradients were zeroed by the clip"}] if bw else []
    _finding(("clip-zero", key), code="GW743", kind="gradient-clipped-to-zero", severity="warning", site=site, sites=sites,
             message="`%s` is called with `%s=0`: it sets every gradient of the %d tensors it is given to exactly zero "
                     "(at %d backward calls), so the optimizer steps with zeros and nothing trains (a bound of 0 does "
                     "not turn clipping off: skip the call, or pass the bound you meant)" % (
                         name, bound_name, count, len(seen)))


def _patch_clipping():
    import torch.nn.utils as utils
    import torch.nn.utils.clip_grad as clip_grad

    for name, bound_name in (("clip_grad_norm_", "max_norm"), ("clip_grad_value_", "clip_value")):
        orig = getattr(clip_grad, name, None)
        if orig is None:
            continue
        wrapper = _clip_wrapper(orig, name, bound_name)
        for mod in (clip_grad, utils):
            if getattr(mod, name, None) is orig:
                setattr(mod, name, wrapper)


_outputs = []  # the last few tensors scale() returned (their nodes are what a scaled backward starts from)
_bw_scaled = {}  # backward number -> did it go through a scale() output (only while a scaler scaled something)
active = [False]


def before_backward(roots):
    """A top-level backward is about to run (number ``_state.bw_count``): does it start from, or
    a few nodes above, a tensor a GradScaler's ``scale()`` returned?"""
    try:
        nodes = {id(t.grad_fn) for t in _outputs if t.grad_fn is not None}
        found = False
        todo = [t.grad_fn for t in roots if isinstance(t, _Tensor) and t.grad_fn is not None]
        seen = 0
        while todo and not found and seen < 32:
            node = todo.pop()
            seen += 1
            if id(node) in nodes:
                found = True
                break
            todo.extend(nf[0] for nf in node.next_functions[:4] if nf[0] is not None)
        _bw_scaled[_state.bw_count] = found
        if len(_bw_scaled) > 256:
            for k in sorted(_bw_scaled)[:128]:
                del _bw_scaled[k]
    except Exception:  # noqa: BLE001
        _internal_error("null steps: backward")


def _check_unscaled(scaler, what, optimizer):
    """Before ``scaler.unscale_``/``step``: the gradients it is about to divide were never scaled."""
    n = _state.bw_count
    if _state.suspended or not n or _stepped.get(scaler) == n:
        return
    prev = _stepped.get(scaler)
    _stepped[scaler] = n
    try:
        if not scaler.is_enabled() or scaler not in _scaled:
            return  # torch itself raises when scale() never ran
        since = [_bw_scaled.get(b) for b in range((prev or 0) + 1, n + 1)]
        if None in since or any(since):
            return  # a backward through a scaled loss (or one not followed) filled these gradients
        if not any(p.grad is not None for g in optimizer.param_groups for p in g["params"]):
            return
        scale = scaler.get_scale()
        if scale == 1.0:
            return
        bw = _state.last_bw_site
        seen = _unscaled.setdefault(scaler, [])
        seen.append(bw)
        if len(seen) < 2 or bw is None:
            return
        step = _site(_user_frame(_caller(1)))
        sites = [{"kind": "step", "site": step, "message": "`scaler.%s` divides the gradients by %g" % (what, scale)}] \
            if step else []
        _finding(("unscaled", tuple(bw[:2])), code="GW736", kind="unscaled-gradients", severity="warning", site=bw,
                 sites=sites,
                 message="this backward does not go through the loss the GradScaler scaled (`scaler.scale(loss)`), "
                         "but the scaler's step unscales the gradients it made: they are divided by its scale (%g) "
                         "at each of %d steps, so every update is that many times too small (call "
                         "`scaler.scale(loss).backward()`)" % (scale, len(seen)))
    except Exception:  # noqa: BLE001
        _internal_error("null steps: scaler")


def _patch_scaler():
    try:
        from torch.amp.grad_scaler import GradScaler
    except Exception:  # noqa: BLE001
        return
    orig_scale = GradScaler.scale

    def scale(self, outputs):
        out = orig_scale(self, outputs)
        try:
            if not _state.suspended:
                _scaled[self] = _state.bw_count
                active[0] = True
                _outputs.extend(t for t in (out if isinstance(out, (list, tuple)) else [out])
                                if isinstance(t, _Tensor))
                del _outputs[:-4]
        except Exception:  # noqa: BLE001
            pass
        return out

    scale.__wrapped__ = orig_scale
    GradScaler.scale = scale

    for name in ("unscale_", "step"):
        orig = getattr(GradScaler, name)

        def method(self, optimizer, *args, _orig=orig, _name=name, **kwargs):
            _check_unscaled(self, _name, optimizer)
            return _orig(self, optimizer, *args, **kwargs)

        method.__wrapped__ = orig
        setattr(GradScaler, name, method)


def install():
    _patch_clipping()
    _patch_scaler()
