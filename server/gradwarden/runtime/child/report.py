"""State of the run and the findings it emits: dedup, the table of torch's messages the
child classifies itself, errors and warnings handed to the parent, the exit event."""
import os
import sys

from . import probestate as _ps
from .device import used_device
from .userfiles import _caller, _display_file, _is_user, _site, _user_frame


ERROR_MARK = "[gradwarden]"


class _State:
    def __init__(self):
        self.events = None
        self.config = {}
        self.bw_count = 0  # top-level backward calls
        self.bw_depth = 0
        self.cur_bw = None  # (n, site, retain) of the running backward
        self.last_bw_site = None  # where the last top-level backward was called
        self.cur_roots = None  # its root nodes
        self.retained = False  # a backward with retain_graph=True ran: later ones may reuse its graph
        self.max_steps = None
        self.reported = set()  # dedup keys of findings
        self.last_progress = 0.0
        self.coverage = None
        self.device = "auto"
        self.findings = 0
        self.stopping = False
        self.user_grads = frozenset()  # storages of grad_tensors the caller passed to backward
        self.suspended = 0  # > 0 inside a compiled region: nothing is recorded
        self.config_text = ""  # the encoded configuration (handed to spawned processes)
        self.finalizers = []  # called once when the run ends, before the exit event (findings made then)

_state = _State()


def _emit(ev, **fields):
    ev_obj = _state.events
    if ev_obj is not None:
        ev_obj.emit(ev, **fields)


def _finding(key, **fields):
    """Emit one finding once (``key`` deduplicates)."""
    if _ps.fresh or key in _state.reported:  # nothing from the bridge's own dry runs
        return
    _state.reported.add(key)
    _state.findings += 1
    fields.setdefault("backward_calls", _state.bw_count)
    _flush_lines()
    _emit("finding", **fields)


def _flush_lines():
    cov = _state.coverage
    if cov is not None and cov.new:
        _emit("lines", lines=cov.take_new())

_internal_errors = [0]


def _internal_error(where):
    """Report (once or twice) that the instrumentation itself failed; the run goes on."""
    _internal_errors[0] += 1
    if _internal_errors[0] <= 3:
        import traceback

        _emit("internal", where=where, error=traceback.format_exc(limit=6))


def _mark(exc):
    try:
        exc._gradwarden_reported = True
    except Exception:  # noqa: BLE001
        pass

_MESSAGES = (
    ("a leaf Variable that requires grad is being used in an in-place operation", "GW101", "leaf-inplace"),
    ("a view of a leaf Variable that requires grad is being used in an in-place operation", "GW101", "leaf-inplace"),
    ("more than one element of the written-to tensor refers to a single memory location", "GW301", "expanded-write"),
    ("some elements of the input tensor and the written-to tensor refer to a single memory location", "GW302",
     "overlapping-write"),
    ("This view is the output of a function that returns multiple views", "GW306", "multi-view-inplace"),
    ("This view was created inside a custom Function", "GW305", "custom-function-view"),
    ("Trying to backward through the graph a second time", "GW402", "freed-graph"),
    ("returned an incorrect number of gradients", "GW307", "custom-function-contract"),
    ("Legacy autograd function with non-static forward method is deprecated", "GW308",
     "custom-function-contract"),
    ("one of the variables needed for gradient computation has been modified by an inplace operation", "GW201",
     "version-counter"),
)


def _classify_message(msg):
    for needle, code, kind in _MESSAGES:
        if needle in msg:
            return code, kind
    return None


def _report_error(code, kind, msg, site, sites, primary=None, **extra):
    """``primary``: where the finding is shown when that is none of its sites (a custom
    backward's ``return``, the raise being its backward site)."""
    first = msg.strip().splitlines()[0] if msg.strip() else msg
    if ERROR_MARK in first:
        first = first.split(ERROR_MARK)[0].strip()
    where = {"write_site": site}
    if kind in ("freed-graph", "custom-function-contract"):
        where = {"backward_site": site}
    if primary is not None:
        where["site"] = primary
    _finding(("error", code, tuple(primary or site or ())), code=code, kind=kind, severity="error",
             message=first, sites=sites, error=first, **dict(where, **extra))


def _raised(exc, site, exc_name=None, sites=()):
    """An exception (or warning) the child does not classify itself: its first line goes to the
    parent, which maps it to the rule that predicts it (rules/messages.py), if any."""
    if _ps.fresh:
        return
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    name = exc_name or type(exc).__name__
    key = ("raised", name, first[:200], tuple(site or ()))
    if key in _state.reported:
        return
    _state.reported.add(key)
    _flush_lines()
    extra = {"sites": list(sites)} if sites else {}
    _emit("raised", exc=name, text=first[:1000], site=site, backward_calls=_state.bw_count, **extra)


# warnings whose hazard the child decides at the call itself (checkpoints.py: torch warns under
# no_grad too, where nothing is lost)
_DECIDED_AT_CALL = ("None of the inputs have requires_grad",)


def _patch_warnings():
    """Warnings as they are shown (the program's filters apply: nothing is shown or hidden
    that a plain run would not show or hide)."""
    import warnings

    orig = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        try:
            if any(text in str(message) for text in _DECIDED_AT_CALL):
                return orig(message, category, filename, lineno, file, line)
            if filename and _is_user(filename):
                site = [_display_file(filename), lineno, ""]
            else:
                site = _site(_user_frame(_caller(1)))
            _raised(message, site, getattr(category, "__name__", "Warning"))
        except Exception:  # noqa: BLE001
            pass
        return orig(message, category, filename, lineno, file, line)

    showwarning.__wrapped__ = orig
    warnings.showwarning = showwarning


def _stop(reason):
    """End the run now (``--max-steps``): report, then leave without running more user code."""
    _state.stopping = True
    _finish(reason, 0)
    os._exit(0)


def _finish(status, code, exc=None):
    finalizers = list(_state.finalizers)
    del _state.finalizers[:]
    for fn in finalizers:
        try:
            fn()
        except Exception:  # noqa: BLE001
            _internal_error("finish")
    cov = _state.coverage
    if cov is not None:
        cov.stop()
    _flush_lines()
    fields = {"status": status, "code": code, "backward_calls": _state.bw_count, "findings": _state.findings,
              "device": used_device(sys.modules["torch"], _state.device) if "torch" in sys.modules else "unknown"}
    if exc is not None:
        fields["exc_type"] = type(exc).__name__
        import re

        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", str(exc)).strip()  # torch colours some messages
        fields["exc"] = text.splitlines()[0][:500] if text else ""
    _emit("exit", **fields)
