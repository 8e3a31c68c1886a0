"""Where the run's checks watch optimizers: each built, and each step.

Several checks need the same two events (polluted gradients, untrained parameters, re-created
instances, emptied one-shot iterators, eval mode): an optimizer just built, with the arguments it
was given, and a step about to run. Each registers its callbacks here; ``Optimizer.__init__`` is
wrapped once per check, in the order ``install`` runs them, and torch's global step pre-hook
(absent from older torch: then no step callback runs) calls the step callbacks.
"""
import torch


def on_build(after, before=None):
    """``after(optimizer, seen)`` once an optimizer is built; ``seen`` is what ``before(args,
    kwargs)`` returned just before (the constructor may consume a one-shot iterator), or None."""
    Optimizer = torch.optim.Optimizer
    orig = Optimizer.__init__

    def __init__(self, *args, **kwargs):
        seen = before(args, kwargs) if before is not None else None
        orig(self, *args, **kwargs)
        after(self, seen)

    __init__.__wrapped__ = orig
    Optimizer.__init__ = __init__


def on_step(hook):
    """``hook(optimizer, args, kwargs)`` before every optimizer step, where torch has global
    step pre-hooks."""
    try:
        from torch.optim.optimizer import register_optimizer_step_pre_hook
    except ImportError:  # older torch: no global step hooks
        return
    register_optimizer_step_pre_hook(hook)
