"""Errors that reach the top of the program (or pytest): the autograd ones not yet reported."""
import torch

from . import contract as _contract
from .records import _built_site
from .report import ERROR_MARK, _classify_message, _mark, _raised, _report_error
from .userfiles import _is_user, _site


def report_exception(exc, tb=None):
    """An exception that reached the top (or pytest): report the autograd ones not yet reported."""
    if exc is None or getattr(exc, "_gradwarden_reported", False):
        return
    msg = str(exc)
    if ERROR_MARK in msg:
        return
    kind = _classify_message(msg)
    frames = []
    tb = tb if tb is not None else exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    # innermost user frame; modules between it and the raise decide where the write "is"
    user = None
    modules = []
    for f in reversed(frames):
        if _is_user(f.f_code.co_filename):
            user = f
            break
        try:
            owner = f.f_locals.get("self")
        except Exception:  # noqa: BLE001
            owner = None
        if owner is not None and isinstance(owner, torch.nn.Module):
            if not modules or modules[-1] is not owner:
                modules.append(owner)
    site = _site(user)
    returned = _contract.site_of_message(msg)
    if returned is not None:
        # a custom backward's outputs broke autograd's contract: the fix goes in its `return`
        _mark(exc)
        if not returned[1]:
            code = "GW309" if "different than None" in (msg or "") else "GW307"
            _report_error(code, "custom-function-contract", msg, site, returned[2], primary=returned[0])
        return
    if kind is None:
        _raised(exc, site)
        _mark(exc)
        return
    sites = []
    if len(modules) > 1:
        built = _built_site(modules[0])
        if built is not None:
            sites.append({"kind": "call", "site": site, "message": "the module is called here"})
            site = built
    _mark(exc)
    if kind[1] == "freed-graph":
        return  # reported by the backward wrapper, which knows the graph
    _report_error(kind[0], kind[1], msg, site, sites)
