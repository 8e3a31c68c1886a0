"""State of a dry run of user code made by the bridge (the chain-rule probe, chainrule.py).

While ``fresh`` holds a set, a probe is running: only tensors made during it (their storage
keys are in the set) may be written, nested backward calls are refused, and nothing is
reported. ``ProbeAbort`` derives from BaseException so that a ``except Exception`` in the
user's code does not swallow it.
"""

fresh = []  # [set of storage keys] while a probe runs, else empty


class ProbeAbort(BaseException):
    """The probe would have a side effect (or cannot run cleanly): it is abandoned."""


def active():
    return bool(fresh)
