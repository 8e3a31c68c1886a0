"""torch.compile: compiled regions run without the instrumentation."""
import sys

import torch

from . import mode as _md
from .report import _internal_error, _state
from .saved import _pack, _unpack


def _suspend_instrumentation():
    """Take the mode and the saved-tensor hooks off while a compiled region runs (and while
    Dynamo compiles it): Dynamo would otherwise trace them (recompiling the mode's code until it
    hits its limit), and compiled code must compute what it computes plainly. Returns the
    function that puts them back."""
    _state.suspended += 1
    popped_mode = popped_hooks = False
    try:
        C = torch._C
        if C._len_torch_function_stack() and C._get_function_stack_at(C._len_torch_function_stack() - 1) is _md._MODE:
            C._pop_torch_function_stack()
            popped_mode = True
        top = C._autograd._top_saved_tensors_default_hooks(True)
        if top is not None and top[0] is _pack:
            C._autograd._pop_saved_tensors_default_hooks()
            popped_hooks = True
    except Exception:  # noqa: BLE001
        _internal_error("suspend")

    def resume():
        _state.suspended -= 1
        try:
            if popped_hooks:
                torch._C._autograd._push_saved_tensors_default_hooks(_pack, _unpack)
            if popped_mode:
                torch._C._push_on_torch_function_stack(_md._MODE)
        except Exception:  # noqa: BLE001
            _internal_error("resume")

    return resume

_dynamo_patched = [False]


def _patch_dynamo():
    """Every ``torch.compile`` context gets an enter hook that suspends the instrumentation."""
    if _dynamo_patched[0]:
        return
    _dynamo_patched[0] = True
    from torch._dynamo import eval_frame

    cls = eval_frame.OptimizeContext
    orig = cls.__init__

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            self.enter_exit_hooks.insert(0, _suspend_instrumentation)
        except Exception:  # noqa: BLE001
            _internal_error("compile")

    __init__.__wrapped__ = orig
    cls.__init__ = __init__


def _patch_compile():
    """Patch Dynamo when the program first calls ``torch.compile`` (importing Dynamo up front
    would cost every run seconds)."""
    orig = torch.compile

    def compile(*args, **kwargs):
        try:
            _patch_dynamo()
        except Exception:  # noqa: BLE001
            _internal_error("compile")
        return orig(*args, **kwargs)

    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(compile, attr, getattr(orig, attr))
        except (AttributeError, TypeError):
            pass
    compile.__wrapped__ = orig
    torch.compile = compile
    if "torch._dynamo.eval_frame" in sys.modules:
        _patch_dynamo()
