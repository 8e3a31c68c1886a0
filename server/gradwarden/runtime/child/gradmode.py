"""Grad mode switched off by a statement and never switched back (GW701, at the switch).

``torch.set_grad_enabled(False)`` is a context manager, but called as a statement it switches grad
mode off at once, for the thread, until something switches it on again: an evaluation helper that
begins with it returns with grad mode still off, and the training step that follows builds no graph.
Its ``loss.backward()`` raises ("element 0 of tensors does not require grad"), at the backward,
while the line to change is the statement (``with torch.no_grad():`` around the evaluation, or the
mode restored before returning).

The run notes the last ``set_grad_enabled(False)`` made by the program's own code (a ``no_grad``
block enters through torch's code and is not noted) until grad mode is switched on again or that
object's ``with`` block exits. A top-level backward whose roots do not require grad while grad mode
is off and such a switch is pending is reported at the switch, as an error (it raises).
"""
import torch

from .report import _finding, _internal_error, _state
from .userfiles import _caller, _is_user, _site, _user_frame

_off = [None]  # (site, id of the set_grad_enabled object) of the pending switch, or None


def before_backward(roots, bw_site):
    """At a top-level backward (before it runs): True when it was reported (the raise that follows is
    this finding's)."""
    off = _off[0]
    if off is None or torch.is_grad_enabled() or not roots:
        return False
    try:
        if any(t.requires_grad for t in roots):
            return False
        site = off[0]
        _finding(("grad-mode-off", tuple(site)), code="GW701", kind="no-grad-backward", severity="error",
                 site=site, backward_site=bw_site,
                 message="`torch.set_grad_enabled(False)` called as a statement here switches grad mode off for "
                         "everything that runs after it, and nothing switched it on again: the loss backwarded "
                         "later was computed without a graph (use `with torch.no_grad():` around what should run "
                         "without gradients, or restore the mode before returning)")
        _off[0] = None
        return True
    except Exception:  # noqa: BLE001
        _internal_error("grad mode")
    return False


def install():
    cls = torch.autograd.grad_mode.set_grad_enabled
    orig_init, orig_exit = cls.__init__, cls.__exit__

    def __init__(self, mode):
        orig_init(self, mode)
        try:
            if mode:
                _off[0] = None
            elif not _state.suspended:
                f = _caller(1)
                if f is not None and _is_user(f.f_code.co_filename):
                    _off[0] = (_site(_user_frame(f)), id(self))
        except Exception:  # noqa: BLE001
            _internal_error("grad mode: switch")

    def __exit__(self, *args):
        off = _off[0]
        if off is not None and off[1] == id(self):
            _off[0] = None
        return orig_exit(self, *args)

    __init__.__wrapped__ = orig_init
    __exit__.__wrapped__ = orig_exit
    cls.__init__ = __init__
    cls.__exit__ = __exit__
