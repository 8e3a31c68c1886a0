"""The instrumented child of a gradwarden debug run (private to gradwarden.runtime).

This file runs under the *target* interpreter (the project's Python, maybe on another
machine): it uses the standard library and torch only and never imports gradwarden. The
parent starts it as a script::

    python _child.py --gw-config <urlsafe-base64 JSON> [--] [script args...]

and reads what it finds from JSON-lines files it appends to in the configured output folder
(``events.<rank>.<pid>.jsonl``, one per process; a forked process opens its own). Nothing is
ever written to the target's stdout/stderr except what the target itself prints.

What it installs before the target runs (see docs/runtime.md for the reasoning):

- ``saved_tensors_hooks`` whose pack records every saved tensor with its version and the
  user's frame, and whose unpack re-does PyTorch's version check (registering the hooks turns
  PyTorch's own check off) and raises the same error, naming the write.
- a ``TorchDispatchMode`` that sees every mutating op (schema arguments with ``is_write``)
  below autograd, before the version bump. A write to the storage of a live saved tensor is
  kept pending until the next event, then attributed by *version-counter identity*: the saved
  tensors whose ``_version`` moved are the ones this write bumped. A write that changed the
  storage without moving the saved tensor's counter is a write through another counter
  (``.data``) or a kernel that does not bump (``fused=True`` optimizers): a silent hazard,
  reported when backward actually uses the stale value.
- wrappers of ``torch.autograd.backward``/``grad`` (backward sites, ``--max-steps``, freed-graph
  errors), of ``nn.Module.__init__`` (where modules were built: an in-place module called from a
  container is reported at its construction line), of ``Tensor.data``'s setter (parameters whose
  data was replaced by an expanded tensor) and of custom Functions' backward (writes into
  ``grad_output``).
- line coverage of the user's files (``sys.monitoring`` on 3.12+, ``sys.settrace`` before), so
  that the parent can tell "the line ran and nothing failed" from "never reached".
"""
import base64
import json
import os
import sys
import time

# Run as a script, Python put this folder first on sys.path: it must not shadow the user's
# modules (``cli``, ``session`` ...).
_HERE = os.path.dirname(os.path.abspath(__file__))
if sys.path and sys.path[0] and os.path.abspath(sys.path[0]) == _HERE:
    del sys.path[0]

PROTOCOL = 1
EXIT_TORCH_MISSING = 3
EXIT_BAD_CONFIG = 4
EXIT_NO_CUDA = 5
ERROR_MARK = "[gradwarden]"

torch = None  # bound by _import_torch()
_Tensor = None


# =========================================================================== events
class Events:
    """Appends JSON lines to this process's own file in the output folder."""

    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.rank = _rank()
        self.fd = -1
        self.path = ""
        self._open()

    def _open(self):
        self.path = os.path.join(self.out_dir, "events.%s.%d.jsonl" % (self.rank, os.getpid()))
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def reopen_after_fork(self):
        try:
            os.close(self.fd)
        except OSError:
            pass
        self._open()

    def emit(self, ev, **fields):
        fields["ev"] = ev
        fields["pid"] = os.getpid()
        fields["rank"] = self.rank
        fields["t"] = round(time.time(), 3)
        try:
            data = (json.dumps(fields, default=str, separators=(",", ":")) + "\n").encode("utf-8", "replace")
            os.write(self.fd, data)
        except Exception:  # noqa: BLE001 - reporting must never break the user's program
            pass


def _rank():
    for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return value
    return "0"


# =========================================================================== user code
class UserFiles:
    """Which files are the user's: everything but the standard library, installed packages,
    torch and this file (the target file itself is always the user's)."""

    def __init__(self, include=()):
        import sysconfig

        prefixes = set()
        for key in ("stdlib", "platstdlib", "purelib", "platlib"):
            try:
                path = sysconfig.get_paths().get(key)
            except Exception:  # noqa: BLE001
                path = None
            if path:
                prefixes.add(os.path.realpath(path))
        for p in (getattr(sys, "base_prefix", ""), getattr(sys, "prefix", "")):
            if p:
                prefixes.add(os.path.realpath(os.path.join(p, "lib")))
                prefixes.add(os.path.realpath(os.path.join(p, "lib64")))
        prefixes.add(_HERE)
        self.prefixes = tuple(sorted(p.rstrip(os.sep) + os.sep for p in prefixes if p))
        self.include = set(os.path.realpath(p) for p in include if p)
        self.cache = {}

    def add_excluded(self, folder):
        folder = os.path.realpath(folder).rstrip(os.sep) + os.sep
        if folder not in self.prefixes:
            self.prefixes = self.prefixes + (folder,)
            self.cache.clear()

    def classify(self, filename):
        result = self._classify(filename)
        self.cache[filename] = result
        return result

    def _classify(self, filename):
        if not filename or filename[0] == "<":
            return False
        real = os.path.realpath(filename) if os.path.isabs(filename) else os.path.realpath(os.path.abspath(filename))
        if real in self.include:
            return True
        if os.sep + "site-packages" + os.sep in real or os.sep + "dist-packages" + os.sep in real:
            return False
        for p in self.prefixes:
            if real.startswith(p):
                return False
        return True


_USER = None  # UserFiles
_ucache = {}  # filename -> bool (the UserFiles cache, bound for speed)


def _is_user(filename):
    u = _ucache.get(filename)
    if u is None:
        u = _USER.classify(filename)
    return u


def _caller(depth):
    """``sys._getframe(depth)`` of the function calling this one, or None when the stack is not
    that deep (code called from a C++ thread, e.g. autograd's CUDA device threads)."""
    try:
        return sys._getframe(depth + 1)
    except ValueError:
        return None


def _user_frame(f):
    """The innermost frame at or above ``f`` that runs user code (None: none)."""
    cache = _ucache
    while f is not None:
        fn = f.f_code.co_filename
        u = cache.get(fn)
        if u is None:
            u = _USER.classify(fn)
        if u:
            return f
        f = f.f_back
    return None


def _site(f):
    if f is None:
        return None
    return [_display_file(f.f_code.co_filename), f.f_lineno, f.f_code.co_name]


_abs_cache = {}


def _display_file(filename):
    out = _abs_cache.get(filename)
    if out is None:
        out = os.path.abspath(filename) if filename and filename[0] != "<" else filename
        _abs_cache[filename] = out
    return out


# =========================================================================== coverage
class Coverage:
    """Lines of the user's files that ran; new lines are flushed as ``lines`` events."""

    def __init__(self, is_user_file):
        self.is_user_file = is_user_file
        self.lines = {}  # filename -> set of rows
        self.new = {}  # filename -> list of rows not yet flushed
        self.saturated = set()  # code objects whose every line ran (settrace: stop tracing them)
        self.code_lines = {}
        self.mode = None
        self.mode_used = None

    # -- sys.monitoring (3.12+): every (code, line) costs one call, then is disabled
    def start(self):
        mon = getattr(sys, "monitoring", None)
        if mon is not None:
            for tool in (mon.COVERAGE_ID, 4, 5):
                try:
                    mon.use_tool_id(tool, "gradwarden")
                except ValueError:
                    continue
                self.tool = tool
                mon.register_callback(tool, mon.events.LINE, self._mon_line)
                mon.set_events(tool, mon.events.LINE)
                self.mode = "monitoring"
                return
        import threading

        sys.settrace(self._global)
        threading.settrace(self._global)
        self.mode = "settrace"

    def stop(self):
        if self.mode == "monitoring":
            mon = sys.monitoring
            try:
                mon.set_events(self.tool, 0)
                mon.register_callback(self.tool, mon.events.LINE, None)
                mon.free_tool_id(self.tool)
            except Exception:  # noqa: BLE001
                pass
        elif self.mode == "settrace":
            import threading

            sys.settrace(None)
            threading.settrace(None)
        if self.mode:
            self.mode_used = self.mode
        self.mode = None

    def _mon_line(self, code, line):
        fn = code.co_filename
        u = _ucache.get(fn)
        if u is None:
            u = self.is_user_file(fn)
        if u:
            self._add(fn, line)
        return sys.monitoring.DISABLE

    # -- sys.settrace (before 3.12): user frames only; a code object stops being traced once
    #    every line of it has run
    def _global(self, frame, event, arg):
        code = frame.f_code
        if code in self.saturated:
            return None
        fn = code.co_filename
        u = _ucache.get(fn)
        if u is None:
            u = self.is_user_file(fn)
        if not u:
            return None
        self._add(fn, frame.f_lineno)
        return self._local

    def _local(self, frame, event, arg):
        if event == "line":
            fn = frame.f_code.co_filename
            seen = self.lines.get(fn)
            line = frame.f_lineno
            if seen is None or line not in seen:
                self._add(fn, line)
                self._check_saturated(frame.f_code)
        return self._local

    def _check_saturated(self, code):
        want = self.code_lines.get(code)
        if want is None:
            try:
                want = {ln for _, _, ln in code.co_lines() if ln is not None}
            except Exception:  # noqa: BLE001
                want = set()
            want.discard(code.co_firstlineno)
            self.code_lines[code] = want
        seen = self.lines.get(code.co_filename, ())
        if want and want.issubset(seen):
            self.saturated.add(code)

    def _add(self, fn, line):
        seen = self.lines.get(fn)
        if seen is None:
            seen = self.lines[fn] = set()
        if line not in seen:
            seen.add(line)
            self.new.setdefault(fn, []).append(line)

    def take_new(self):
        new, self.new = self.new, {}
        return {_display_file(fn): sorted(rows) for fn, rows in new.items()}


# =========================================================================== device
def select_device(config, torch_mod, environ):
    """Resolve ``--device`` in the child. Returns (device_string, error_message_or_None).

    ``auto`` does not touch CUDA before the script runs (a script may still choose its GPUs
    through CUDA_VISIBLE_DEVICES): the device actually used is read at exit, see
    ``used_device``. ``cuda`` (or a default device) needs CUDA now. ``cpu`` hides the GPUs
    (the parent sets CUDA_VISIBLE_DEVICES to empty)."""
    want = config.get("device", "auto")
    if want == "cpu":
        return "cpu", None
    default = config.get("default_device", False)
    if want == "cuda" or default:
        if not torch_mod.cuda.is_available():
            if want == "cuda":
                return None, "--device cuda: CUDA is not available in %s (torch %s, CUDA build %s)" % (
                    sys.executable, torch_mod.__version__, getattr(torch_mod.version, "cuda", None))
            return "cpu", None
        index = torch_mod.cuda.current_device()
        if default:
            torch_mod.set_default_device("cuda:%d" % index)
        return "cuda:%d (%s)" % (index, torch_mod.cuda.get_device_name(index)), None
    return "auto", None


def used_device(torch_mod, chosen):
    """What the run used: CUDA when the script initialised it, else the CPU."""
    try:
        if chosen not in ("auto", None) and chosen != "cpu":
            return chosen
        cuda = getattr(torch_mod, "cuda", None)
        if cuda is not None and cuda.is_initialized():
            index = cuda.current_device()
            return "cuda:%d (%s)" % (index, cuda.get_device_name(index))
    except Exception:  # noqa: BLE001
        pass
    return "cpu"


def child_environment(config, environ):
    """Environment changes the child makes before importing torch."""
    changes = {}
    device = config.get("device", "auto")
    if device in ("auto", "cuda"):
        changes["CUDA_LAUNCH_BLOCKING"] = "1"  # errors point at the line that launched the kernel
    if device == "cpu":
        changes["CUDA_VISIBLE_DEVICES"] = ""
    return changes


# =========================================================================== state
class _State:
    def __init__(self):
        self.events = None
        self.config = {}
        self.bw_count = 0  # top-level backward calls
        self.bw_depth = 0
        self.cur_bw = None  # (n, site, retain) of the running backward
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


_state = _State()
_pending = []  # writes waiting for their version bump: (write, tensor, version_before, records)
_by_storage = {}  # storage base pointer -> [weakref(_Rec)]
_grad_outputs = []  # stack of sets: storage keys of the grad_outputs of running custom backwards
_mod_sites = None  # WeakKeyDictionary: nn.Module -> construction site
_data_sites = None  # WeakKeyDictionary: tensor -> site where .data was set to an overlapping tensor
_packs = [0]
SWEEP_EVERY = 4096


class _Rec(object):
    """One saved tensor, as packed."""

    __slots__ = ("t", "version", "site", "key", "last", "first", "first_from", "first_to", "silent",
                 "silent_done", "bw", "__weakref__")


class _Write(object):
    """One mutating op that touched the storage of a live saved tensor."""

    __slots__ = ("op", "site", "call_site", "module", "module_site", "step", "fused", "in_backward", "via",
                 "internal")


def _emit(ev, **fields):
    ev_obj = _state.events
    if ev_obj is not None:
        ev_obj.emit(ev, **fields)


def _finding(key, **fields):
    """Emit one finding once (``key`` deduplicates)."""
    if key in _state.reported:
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


# =========================================================================== tensors
def _storage_key(t):
    try:
        ptr = t.data_ptr()
    except Exception:  # noqa: BLE001 - no storage (meta, sparse, some subclasses)
        return None
    try:
        return ptr - t.storage_offset() * t.element_size()
    except Exception:  # noqa: BLE001
        return ptr


def _extent(t):
    """Byte range [lo, hi) of ``t`` in its storage (assumes non-negative strides)."""
    try:
        n = t.numel()
        es = t.element_size()
        lo = t.storage_offset() * es
        if n == 0:
            return lo, lo
        span = 1
        for size, stride in zip(t.shape, t.stride()):
            if size > 1:
                span += (size - 1) * abs(stride)
        return lo, lo + span * es
    except Exception:  # noqa: BLE001
        return 0, 1 << 62


def _overlaps(a, b):
    """True when ``a`` and ``b`` (views of one storage) share at least one element: proof that
    a write into ``b`` changed values of ``a``. Interleaved views (the chunks of one tensor
    along an inner dimension) have overlapping byte ranges but no common element."""
    try:
        if a.device != b.device:
            return False
    except Exception:  # noqa: BLE001
        return False
    alo, ahi = _extent(a)
    blo, bhi = _extent(b)
    if not (alo < bhi and blo < ahi):
        return False
    try:
        es = a.element_size()
        if (es == b.element_size() and a.storage_offset() == b.storage_offset() and a.shape == b.shape
                and a.stride() == b.stride()):
            return True
        if a.is_contiguous() and b.is_contiguous():
            return True  # two dense byte ranges that intersect
        if es != b.element_size() or alo % es or blo % es:
            return True  # reinterpreted dtypes: keep the byte-range answer
        n = max(ahi, bhi) // es
        if n > (1 << 26):
            return True
        with torch.no_grad(), torch._C.DisableTorchFunction():
            index = torch.arange(n, dtype=torch.int64)
            ia = index.as_strided(tuple(a.shape), a.stride(), a.storage_offset()).reshape(-1)
            ib = index.as_strided(tuple(b.shape), b.stride(), b.storage_offset()).reshape(-1)
            return bool(torch.isin(ia, ib).any())
    except Exception:  # noqa: BLE001
        return True


def _internal_overlap(t):
    """True when several elements of ``t`` share memory (a 0 stride on a dimension > 1)."""
    try:
        return any(st == 0 and s > 1 for s, st in zip(t.shape, t.stride()))
    except Exception:  # noqa: BLE001
        return False


def _describe(t):
    try:
        return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": str(t.device),
                "type": t.type()}
    except Exception:  # noqa: BLE001
        return {}


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


# =========================================================================== saved tensors
def _pack(t):
    try:
        return _pack_record(t)
    except Exception:  # noqa: BLE001 - never break autograd: an untracked record
        _internal_error("pack")
        r = _Rec()
        r.t = t
        r.version = None
        return r


def _pack_record(t):
    # no _finalize() here: a pack inside an in-place op (index_put_ saves its indices) comes
    # before that op's version bump; _on_write attributes its writes once the op returned
    r = _Rec()
    r.t = t
    r.version = r.last = t._version
    r.site = _site(_user_frame(_caller(2)))
    r.first = r.silent = None
    r.silent_done = False
    r.bw = _state.bw_count
    key = r.key = _storage_key(t)
    if key is not None:
        refs = _by_storage.get(key)
        if refs is None:
            _by_storage[key] = [_weakref(r)]
        else:
            refs.append(_weakref(r))
    _packs[0] += 1
    _recent.append(r)
    if _packs[0] % SWEEP_EVERY == 0:
        _sweep()
    return r


_recent = None  # deque of the last records packed (bound in install())


def _check_packed_during(func, packs):
    """``func`` (a call that is not in-place) saved tensors for backward: when one of them
    is already at another version when the call returns, the call itself wrote it after saving
    it (an in-place write inside torch's implementation, pytorch#162350): that write is the one
    to name if backward later finds the version moved."""
    try:
        n = min(_packs[0] - packs, len(_recent))
        w = None
        for i in range(1, n + 1):
            r = _recent[-i]
            if r.version is None or r.first is not None:
                continue
            cur = r.t._version
            if cur != r.version:
                if w is None:
                    w = _make_write(func, _caller(2))
                    w.internal = True
                r.first = w
                r.first_from = r.version
                r.first_to = r.last = cur
    except Exception:  # noqa: BLE001
        _internal_error("internal write")


def _unpack(r):
    t = r.t
    if r.version is None:
        return t
    try:
        cur = t._version
        bw = _state.cur_bw
        node = _current_node()
        if node is not None and bw is not None:
            node.metadata["_gradwarden"] = (r.site, bw[0], bw[1], bw[2])
    except Exception:  # noqa: BLE001
        _internal_error("unpack")
        return t
    if cur != r.version:
        try:
            message = _version_error(r, cur, node, bw)
        except Exception:  # noqa: BLE001
            _internal_error("version error")
            message = ("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: it is at version %d; expected version %d instead. %s" % (cur, r.version, ERROR_MARK))
        raise RuntimeError(message)
    if r.silent is not None and not r.silent_done:
        r.silent_done = True
        try:
            _silent_finding(r, node, bw)
        except Exception:  # noqa: BLE001
            _internal_error("silent finding")
    return t


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


def _version_error(r, cur, node, bw):
    w = r.first
    name = _node_name(node)
    desc = _describe(r.t)
    shape = "[%s [%s]]" % (desc.get("type", "tensor"), ", ".join(str(s) for s in desc.get("shape", [])))
    base = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "%s%s, is at version %d; expected version %d instead." % (
                shape, (", which is saved by " + name) if name else "", cur, r.version))
    sites = []
    if w is not None:
        code = "GW501" if w.step else ("GW202" if w.in_backward else "GW201")
        wsite, extra = _write_sites(w)
        sites.extend(extra)
        if w.step:
            sites.append({"kind": "step", "site": w.site, "message": "%s.step() updates the parameter in place" % w.step})
        where = "%s:%s" % (wsite[0], wsite[1]) if wsite else "an unknown line"
        if w.internal:
            note = " %s the in-place write is inside torch's implementation of %s at %s" % (ERROR_MARK, w.op, where)
        else:
            note = " %s the in-place write is %s at %s" % (ERROR_MARK, w.op, where)
        if r.site:
            note += "; the tensor was saved at %s:%s" % (r.site[0], r.site[1])
        note += " (version %d -> %d)." % (r.first_from, r.first_to)
    else:
        code = "GW201"
        wsite = None
        note = " %s gradwarden did not see the in-place write (another thread, or before the run)." % ERROR_MARK
    msg = base + note
    key = ("version", code, tuple(wsite or ()), tuple(r.site or ()))
    _finding(key, code=code, kind="version-counter",
             message=_short_version_message(w, r, name, cur),
             severity="error", write_site=wsite, save_site=r.site, backward_site=bw[1] if bw else None,
             save_op=name, write_op=w.op if w else None, sites=sites,
             versions={"saved": r.version, "current": cur,
                       "write_from": r.first_from if w else None, "write_to": r.first_to if w else None},
             tensor=desc, module=w.module if w else None)
    return msg


def _short_version_message(w, r, node_name, cur):
    saver = node_name or "an autograd node"
    if w is None:
        return ("a tensor that %s saved for backward was modified in place (version %d -> %d); "
                "the write was not observed" % (saver, r.version, cur))
    if w.internal:
        return ("%s writes in place, inside torch's own implementation, a tensor that %s saved for backward "
                "(saved at version %d, now %d); backward raises" % (w.op, saver, r.version, cur))
    what = "%s.step()" % w.step if w.step else w.op
    return ("in-place %s modifies a tensor that %s saved for backward (saved at version %d, now %d); "
            "backward raises" % (what, saver, r.version, cur))


def _silent_finding(r, node, bw):
    w = r.silent
    name = _node_name(node)
    wsite, extra = _write_sites(w)
    if w.step and w.fused:
        code, kind = "GW502", "fused-step"
        message = ("fused %s.step() overwrote a parameter that %s saved for backward without bumping its "
                   "version: this backward silently used the new weights" % (w.step, name or "a node"))
    else:
        code, kind = "GW601", "data-write"
        message = ("%s wrote into a tensor that %s saved for backward through an alias that does not share "
                   "its version counter (.data): this backward silently used the modified values" % (
                       w.op, name or "a node"))
    key = ("silent", code, tuple(wsite or ()), tuple(r.site or ()))
    _silent_sites.add(tuple(wsite or ()))
    _finding(key, code=code, kind=kind, message=message, severity="warning", write_site=wsite,
             save_site=r.site, backward_site=bw[1] if bw else None, save_op=name, write_op=w.op,
             sites=extra, versions={"saved": r.version, "current": r.t._version}, tensor=_describe(r.t))


# =========================================================================== writes
def _on_write(func, kind, args, kwargs):
    go_hit = False
    targets = ()
    try:
        targets = _function_targets(kind, args, kwargs)
        go_hit = _before_write(func, targets)
    except Exception:  # noqa: BLE001 - a bug of ours must never break the user's program
        _internal_error("write")
    try:
        out = func(*args, **kwargs) if kwargs else func(*args)
    except (RuntimeError, ValueError) as exc:
        del _pending[:]
        try:
            _write_error(exc, func, targets, go_hit)
        except Exception:  # noqa: BLE001
            _internal_error("write error")
        raise
    # above autograd, the version bump has happened: attribute the write now
    if _pending:
        _finalize()
    if go_hit and go_hit is not True:
        try:
            _grad_output_finding(func, severity="warning", reason=go_hit)
        except Exception:  # noqa: BLE001
            _internal_error("grad_output")
    elif _expanded and targets:
        try:
            _check_expanded_write(func, targets)
        except Exception:  # noqa: BLE001
            _internal_error("expanded write")
    return out


def _before_write(func, targets):
    """Queue the writes that touch live saved tensors; True when one writes a grad_output."""
    hits = None
    go_hit = False
    write = None
    for t in targets:
        key = _storage_key(t)
        if key is None:
            continue
        if _by_storage:
            live = _live(key)
            if live:
                if write is None:
                    write = _make_write(func, _caller(3))
                if hits is None:
                    hits = []
                hits.append((write, t, t._version, live))
        if _grad_outputs:
            reason = _grad_outputs[-1].get(key, False)
            if reason is not False:
                go_hit = reason or True
                if reason is None:  # a private buffer, unless autograd also hands it to another node
                    writes = _grad_outputs[-1].setdefault("writes", {})
                    if key not in writes:
                        writes[key] = _write_sites(_make_write(func, _caller(3)))[0]
    if len(targets) == 1 and not go_hit:
        _check_expanded_base(func, targets[0])
    if _aliases:
        for t in targets:
            _check_hidden_write(func, t)
    if _leaf_writes is not None:
        site = None
        for t in targets:
            if t.requires_grad and t.is_leaf:
                if site is None:
                    site = _write_sites(_make_write(func, _caller(3)))
                _leaf_writes[t] = (_built_count[0], site[0])
    if hits:
        _pending.extend(hits)
    return go_hit


_internal_errors = [0]


def _internal_error(where):
    """Report (once or twice) that the instrumentation itself failed; the run goes on."""
    _internal_errors[0] += 1
    if _internal_errors[0] <= 3:
        import traceback

        _emit("internal", where=where, error=traceback.format_exc(limit=6))


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
    modules = []
    f = frame
    nn_module = torch.nn.Module
    optimizer = torch.optim.Optimizer
    while f is not None:
        fn = f.f_code.co_filename
        u = _ucache.get(fn)
        if u is None:
            u = _USER.classify(fn)
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


def _is_fused(opt):
    try:
        if opt.defaults.get("fused"):
            return True
        return any(g.get("fused") for g in opt.param_groups)
    except Exception:  # noqa: BLE001
        return False


def _finalize():
    """Attribute the pending writes now that their version bump happened."""
    items = list(_pending)
    del _pending[:]
    for w, t, before, live in items:
        try:
            moved_self = t._version != before
        except Exception:  # noqa: BLE001
            moved_self = True
        for r in live:
            cur = r.t._version
            if cur != r.last:
                if r.first is None and r.last == r.version:
                    r.first = w
                    r.first_from = r.last
                    r.first_to = cur
                r.last = cur
            elif r.silent is None and r.first is None:
                # the storage changed but this saved tensor's counter did not move
                if moved_self:
                    # written through an alias with its own counter (.data, from_blob ...)
                    if _overlaps(r.t, t):
                        r.silent = w
                elif w.step and w.fused:
                    # a kernel that does not bump versions (fused optimizers); other such
                    # kernels (batch norm's running stats) are harmless by design
                    if _overlaps(r.t, t):
                        r.silent = w


def _write_error(exc, func, targets, grad_output):
    msg = str(exc)
    kind = _classify_message(msg)
    if kind is None:
        # the parent maps it to a rule (rules/messages.py), e.g. a view made under no_grad
        # written with grad on, detach_() of a view
        _raised(exc, _site(_user_frame(_caller(2))))
        _mark(exc)
        return
    f = _user_frame(_caller(2))
    w = _make_write(func, _caller(2))
    site, extra = _write_sites(w)
    code = kind[0]
    sites = list(extra)
    if code == "GW301":
        if grad_output:
            code = "GW303"
        else:
            for t in targets:
                cause = _data_sites.get(t) if _data_sites is not None else None
                if cause is not None:
                    code = "GW304"
                    sites.append({"kind": "write", "site": site, "message": "the write that fails"})
                    sites.append({"kind": "created", "site": cause,
                                  "message": ".data replaced by an expanded tensor here"})
                    site = cause
                    break
                made = _expand_made.get(t) if _expand_made is not None else None
                if made is not None:
                    sites.append({"kind": "created", "site": made[0],
                                  "message": "the expanded tensor written into was made here"})
                    if not (id(f) == made[1] and f is not None and f.f_code is made[2]):
                        # made in another call (a buffer built in __init__, written in forward):
                        # the expand is the line to change, the write is where it fails
                        sites.append({"kind": "write", "site": site, "message": "the write that fails"})
                        site = made[0]
                    break
    _mark(exc)
    _report_error(code, kind[1], msg, site or _site(f), sites, write_op=_op_name(func))


def _mark(exc):
    try:
        exc._gradwarden_reported = True
    except Exception:  # noqa: BLE001
        pass


_expanded = {}  # id(tensor) -> weakref: expands of tensors that require grad, and views of those
_expand_made = None  # WeakIdKeyDictionary: expanded tensor -> (site, id of the frame, code) where expand made it
_expand_funcs = set()


def _track_views(func, args, kwargs):
    """Run a non-mutating op while expanded tensors that require grad are alive: remember the
    expands and the views taken of them (a later write into one element changes them all)."""
    out = func(*args, **kwargs) if kwargs else func(*args)
    try:
        src = args[0] if args else None
        if not isinstance(src, _Tensor):
            return out
        if func in _expand_funcs:
            if _expand_made is not None and isinstance(out, _Tensor) and _internal_overlap(out):
                f = _user_frame(_caller(2))
                if f is not None:
                    _expand_made[out] = (_site(f), id(f), f.f_code)
            if src.requires_grad and isinstance(out, _Tensor) and _internal_overlap(out):
                _expanded[id(out)] = _weakref(out)
                if len(_expanded) > 4096:
                    _sweep_expanded()
        else:
            ref = _expanded.get(id(src))
            if ref is not None and ref() is src:
                base = src._base if src._base is not None else src
                for o in (out if isinstance(out, (tuple, list)) else (out,)):
                    if isinstance(o, _Tensor) and o._base is base:
                        _expanded[id(o)] = _weakref(o)
    except Exception:  # noqa: BLE001
        _internal_error("views")
    return out


def _sweep_expanded():
    for key in [k for k, ref in _expanded.items() if ref() is None]:
        del _expanded[key]


def _check_expanded_write(func, targets):
    for t in targets:
        ref = _expanded.get(id(t))
        if ref is not None and ref() is t:
            w = _make_write(func, _caller(3))
            site, extra = _write_sites(w)
            _finding(("expanded-view", tuple(site or ())), code="GW301", kind="expanded-write", severity="warning",
                     message="in-place %s writes into (a view of) an expanded tensor: the element it writes stands "
                             "for every broadcast position, so all of them change (values and gradients are "
                             "silently wrong)" % _op_name(func),
                     write_site=site, sites=extra, write_op=_op_name(func), tensor=_describe(t))
            return


def _check_expanded_base(func, t):
    """A write into one element of an expanded tensor that requires grad: every position that
    shares the element changes (silently wrong values and gradients)."""
    try:
        base = t._base
        if base is None or not base.requires_grad or not _internal_overlap(base):
            return
    except Exception:  # noqa: BLE001
        return
    w = _make_write(func, _caller(3))
    site, extra = _write_sites(w)
    _finding(("expanded-base", tuple(site or ())), code="GW301", kind="expanded-write", severity="warning",
             message="in-place %s writes into a view of an expanded tensor: one element is shared by several "
                     "positions, so all of them change (values and gradients are silently wrong)" % _op_name(func),
             write_site=site, sites=extra, write_op=_op_name(func), tensor=_describe(base))


def _grad_output_finding(func, severity, reason=None):
    w = _make_write(func, _caller(3))
    site, extra = _write_sites(w)
    why = {"expanded": "it is an expanded tensor: one element stands for many, so all of them change",
           "user": "it is the caller's own tensor (grad_tensors/grad_outputs), which the write changes"}.get(
        reason, "the gradient buffer may be shared with other consumers")
    _finding(("grad-output", tuple(site or ())), code="GW303", kind="grad-output-write", severity=severity,
             message="custom Function backward writes into grad_output in place (%s): %s" % (_op_name(func), why),
             write_site=site, sites=extra, write_op=_op_name(func))


# =========================================================================== errors
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


def _report_error(code, kind, msg, site, sites, **extra):
    first = msg.strip().splitlines()[0] if msg.strip() else msg
    if ERROR_MARK in first:
        first = first.split(ERROR_MARK)[0].strip()
    where = {"write_site": site}
    if kind in ("freed-graph", "custom-function-contract"):
        where = {"backward_site": site}
    _finding(("error", code, tuple(site or ())), code=code, kind=kind, severity="error",
             message=first, sites=sites, error=first, **dict(where, **extra))


def _raised(exc, site, exc_name=None):
    """An exception (or warning) the child does not classify itself: its first line goes to the
    parent, which maps it to the rule that predicts it (rules/messages.py), if any."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    name = exc_name or type(exc).__name__
    key = ("raised", name, first[:200], tuple(site or ()))
    if key in _state.reported:
        return
    _state.reported.add(key)
    _flush_lines()
    _emit("raised", exc=name, text=first[:1000], site=site, backward_calls=_state.bw_count)


def _patch_warnings():
    """Warnings as they are shown (the program's filters apply: nothing is shown or hidden
    that a plain run would not show or hide)."""
    import warnings

    orig = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        try:
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


# =========================================================================== backward
def _roots(args, kwargs, name):
    value = kwargs.get(name) if name in kwargs else (args[0] if args else None)
    if value is None:
        return []
    if isinstance(value, _Tensor):
        return [value]
    try:
        return [v for v in value if isinstance(v, _Tensor)]
    except TypeError:
        return []


def _wrap_backward(orig, kind):
    retain_pos = 2 if kind == "backward" else 3
    create_pos = 3 if kind == "backward" else 4
    roots_name = "tensors" if kind == "backward" else "outputs"
    grads_name = "grad_tensors" if kind == "backward" else "grad_outputs"
    grads_pos = 1 if kind == "backward" else 2

    def wrapper(*args, **kwargs):
        st = _state
        if st.suspended:  # Dynamo/AOTAutograd tracing a compiled region
            return orig(*args, **kwargs)
        top = st.bw_depth == 0
        if top and st.max_steps is not None and st.bw_count >= st.max_steps:
            _stop("max-steps")
        if _pending:
            _finalize()
        if top and st.retained:
            try:
                _check_stale_graph([t.grad_fn for t in _roots(args, kwargs, roots_name) if t.grad_fn is not None],
                                   _site(_user_frame(_caller(1))))
            except Exception:  # noqa: BLE001
                _internal_error("stale graph")
        if _hidden and top:
            try:
                _check_hidden_uses(_roots(args, kwargs, roots_name), _site(_user_frame(_caller(1))))
            except Exception:  # noqa: BLE001
                _internal_error("hidden write")
        retain = kwargs.get("retain_graph", args[retain_pos] if len(args) > retain_pos else None)
        create = kwargs.get("create_graph", args[create_pos] if len(args) > create_pos else False)
        if retain is None:
            retain = bool(create)
        site = _site(_user_frame(_caller(1)))
        grads = kwargs.get(grads_name, args[grads_pos] if len(args) > grads_pos else None)
        saved_user = st.user_grads
        if grads is not None:
            st.user_grads = set(saved_user)
            for g in ([grads] if isinstance(grads, _Tensor) else (grads if isinstance(grads, (list, tuple)) else ())):
                if isinstance(g, _Tensor):
                    k = _storage_key(g)
                    if k is not None:
                        st.user_grads.add(k)
        if top:
            st.bw_count += 1
            if retain:
                st.retained = True
            else:
                try:
                    _remember_roots(st.bw_count, _roots(args, kwargs, roots_name))
                except Exception:  # noqa: BLE001
                    _internal_error("roots")
        prev = st.cur_bw
        prev_roots = st.cur_roots
        st.cur_bw = (st.bw_count, site, bool(retain))
        st.cur_roots = None
        try:
            st.cur_roots = [t.grad_fn for t in _roots(args, kwargs, roots_name) if t.grad_fn is not None]
        except Exception:  # noqa: BLE001
            pass
        st.bw_depth += 1
        try:
            out = orig(*args, **kwargs)
            if top and _stale_found:
                for fields in list(_stale_found):
                    _finding(fields.pop("key"), **fields)
            return out
        except RuntimeError as exc:
            if "backward through the graph a second time" in str(exc) and not getattr(exc, "_gradwarden_reported", 0):
                try:
                    _freed_graph(exc, _roots(args, kwargs, roots_name), site, st.cur_bw[0])
                except Exception:  # noqa: BLE001
                    _internal_error("freed graph")
            raise
        finally:
            st.bw_depth -= 1
            st.cur_bw = prev
            st.cur_roots = prev_roots
            st.user_grads = saved_user
            if top:
                del _stale_found[:]
                if _grad_watch:
                    _unwatch_grads()
                if _hidden_found:
                    _emit_hidden()
                _sweep()
                if _expanded:
                    _sweep_expanded()
                now = time.time()
                if now - st.last_progress > 0.25 or st.bw_count == 1:
                    st.last_progress = now
                    _flush_lines()
                    _emit("backward", n=st.bw_count, site=site)

    wrapper.__name__ = getattr(orig, "__name__", kind)
    wrapper.__qualname__ = getattr(orig, "__qualname__", kind)
    wrapper.__doc__ = getattr(orig, "__doc__", None)
    wrapper.__wrapped__ = orig
    return wrapper


def _unpack_tag(node):
    """(save site, backward number, backward site, retained) of the last backward that ran
    ``node`` (set when it unpacked its saved tensors), or None."""
    try:
        return node.metadata.get("_gradwarden")
    except Exception:  # noqa: BLE001
        return None


def _next_nodes(node):
    try:
        return [n for n, _ in node.next_functions if n is not None]
    except Exception:  # noqa: BLE001
        return []


def _walk(starts, stop=None, limit=200000):
    """Breadth-first over the graph below ``starts``: (nodes by id, parent by id, the first node
    for which ``stop`` is true or None). The nodes are kept alive, so their ids stay unique."""
    from collections import deque

    nodes, parent = {}, {}
    queue = deque()
    for n in starts:
        if n is not None and id(n) not in nodes:
            nodes[id(n)] = n
            parent[id(n)] = None
            queue.append(n)
    steps = 0
    while queue and steps < limit:
        node = queue.popleft()
        steps += 1
        if stop is not None and stop(node):
            return nodes, parent, node
        for nxt in _next_nodes(node):
            if id(nxt) not in nodes:
                nodes[id(nxt)] = nxt
                parent[id(nxt)] = node
                queue.append(nxt)
    return nodes, parent, None


def _add_built(sites, kind, node, message):
    """Append the sites where ``node`` was built (inner, and the outer call when different):
    the mode's tag, else (a node made inside a C++ implementation) where it saved tensors."""
    built = _built_sites(node)
    if built is None or built[0] is None:
        tag = _unpack_tag(node)
        if tag is None or not tag[0]:
            return None
        built = (tag[0], None, None)
    sites.append({"kind": kind, "site": built[0], "message": message})
    if built[1] is not None:
        sites.append({"kind": kind, "site": built[1], "message": message + " (the call)"})
    return built[0]


def _freed_graph(exc, roots, site, current):
    """A backward ran into a node whose saved tensors an earlier backward freed. Find that node
    (the unpack hook tagged every node it ran with the backward that ran it), then, on the path
    from the root to it, the boundary between this backward's graph and the freed one: the
    node that reuses the stale tensor (built after the freeing backward, or run by this one)
    and the node that made the stale tensor. No path node on this side: the root itself is
    stale, backward goes twice through one graph."""
    def freed(node):
        tag = _unpack_tag(node)
        return tag is not None and not tag[3] and tag[1] != current

    nodes, parent, found = _walk([t.grad_fn for t in roots], freed)
    if found is None:
        _finding(("freed", tuple(site or ())), code="GW402", kind="freed-graph", severity="error",
                 message="backward through a graph that an earlier backward freed (the freed node was not seen)",
                 backward_site=site, error=str(exc).splitlines()[0])
        _mark(exc)
        return
    tag = _unpack_tag(found)
    built, freed_n, freed_site, _ = tag
    path = [found]
    while parent[id(path[-1])] is not None:
        path.append(parent[id(path[-1])])
    path.reverse()  # root ... found

    def live(node):
        t = _unpack_tag(node)
        if t is not None and t[1] == current:
            return True
        b = _built_sites(node)
        return b is not None and b[2] >= freed_n

    boundary = None
    for i in range(len(path) - 2, -1, -1):
        if live(path[i]):
            boundary = i
            break
    sites = []
    if freed_site:
        sites.append({"kind": "freed", "site": freed_site,
                      "message": "backward #%d freed this graph (no retain_graph=True)" % freed_n})
    if built:
        sites.append({"kind": "save", "site": built, "message": "the freed part of the graph was built here (%s)"
                      % _node_name(found)})
    primary = None
    if boundary is not None:
        code = "GW402"
        consumer, stale = path[boundary], path[boundary + 1]
        primary = None
        for node in reversed(path[:boundary + 1]):  # the consumer, else the nearest node above it with a site
            primary = _add_built(sites, "reuse", node, "backward #%d reuses here (%s) a tensor of the graph that "
                                 "backward #%d freed" % (current, _node_name(consumer), freed_n))
            if primary is not None:
                break
        made = None
        for node in path[boundary + 1:]:  # the stale tensor's node, else the nearest one below with a site
            made = _add_built(sites, "created", node, "the stale tensor (%s) was made here, before backward #%d"
                              % (_node_name(stale), freed_n))
            if made is not None:
                break
        first = _first_use(freed_n, stale)
        if first is not None:
            _add_built(sites, "first-use", first, "backward #%d went through the stale tensor from here (%s) and "
                       "freed its graph" % (freed_n, _node_name(first)))
        message = "backward #%d reuses a tensor of a graph that backward #%d (line %s) freed: %s" % (
            current, freed_n, freed_site[1] if freed_site else "?", _node_name(stale))
        if made is not None:
            message += " made at line %s" % made[1]
        if primary is not None:
            message += ", reused at line %s" % primary[1]
    else:
        code = "GW401"
        origin = _origin(path[0], freed_n)
        if origin is not None:
            primary = _add_built(sites, "created", origin, "the freed graph starts here (%s)" % _node_name(origin))
        message = ("backward #%d goes through a graph that backward #%d (line %s) already went through and freed "
                   "(no retain_graph=True)%s" % (current, freed_n, freed_site[1] if freed_site else "?",
                                                  ("; the graph starts at line %s" % primary[1]) if primary else ""))
    key = ("freed", tuple(built or ()), tuple(freed_site or ()), tuple(site or ()))
    _finding(key, code=code, kind="freed-graph", severity="error", message=message, site=primary or built,
             save_site=built, backward_site=site, freed_site=freed_site, save_op=_node_name(found),
             sites=sites, error=str(exc).splitlines()[0])
    _mark(exc)


def _first_use(freed_n, stale):
    """The node of backward #freed_n's graph that took ``stale`` in (its roots are kept for the
    last few backward calls), or None."""
    roots = _bw_roots.get(freed_n)
    if not roots:
        return None
    _, _, hit = _walk(roots, lambda node: any(n is stale for n in _next_nodes(node)))
    return hit


def _origin(root, freed_n):
    """The first-built node (lowest sequence number) of the stale graph below ``root``."""
    nodes, _, _ = _walk([root], limit=50000)
    best = None
    for node in nodes.values():
        b = _built_sites(node)
        if b is None or b[0] is None or b[2] >= freed_n:
            continue
        try:
            seq = node._sequence_nr()
        except Exception:  # noqa: BLE001
            continue
        if best is None or seq < best[0]:
            best = (seq, node)
    return best[1] if best else None


_bw_roots = {}  # backward number -> root nodes of that top-level backward without retain_graph (the last few)


def _remember_roots(n, roots):
    nodes = [t.grad_fn for t in roots if t.grad_fn is not None]
    if nodes:
        _bw_roots[n] = nodes
        for old in [k for k in _bw_roots if k <= n - 2]:
            del _bw_roots[old]


# =========================================================================== writes hidden from autograd
_aliases = None  # WeakIdKeyDictionary: x.detach() / x.data of a graph tensor x -> weakref to x
_silent_sites = set()  # write sites of the GW601/GW502 findings (the saved tensor's report says it all)
_hidden_found = []  # GW602 findings of the running backward, emitted when it ends: (key, fields)
_hidden = []  # writes through such an alias: [weakref to x, x's node, x's output_nr, write, build count, site]


def _note_alias(src, out):
    """``out`` is ``src.detach()`` or ``src.data``: a write through it changes ``src``'s values
    without autograd recording it (it shares the memory, not the graph)."""
    try:
        if _aliases is not None and isinstance(src, _Tensor) and src.grad_fn is not None and out is not src:
            _aliases[out] = _weakref(src)
    except Exception:  # noqa: BLE001
        _internal_error("alias")


def _check_hidden_write(func, t):
    ref = _aliases.get(t)
    if ref is None:
        base = t._base
        ref = _aliases.get(base) if base is not None else None
    src = ref() if ref is not None else None
    if src is None or src.grad_fn is None:
        return
    w = _make_write(func, _caller(4))
    site, _ = _write_sites(w)
    _hidden.append([ref, src.grad_fn, src.output_nr, w, _built_count[0], site])
    if len(_hidden) > 64:
        del _hidden[0]


def _check_hidden_uses(roots, bw_site):
    """Before a backward: a node built after a hidden write that takes the written tensor in
    used the new values, while backward differentiates the producer of the old ones."""
    for item in list(_hidden):
        ref, node, nr, w, count, site = item
        if ref() is None:
            _hidden.remove(item)
            continue

        def uses(n):
            if _BUILT_COUNT(n) <= count:
                return False
            try:
                return any(nxt is node and k == nr for nxt, k in n.next_functions)
            except Exception:  # noqa: BLE001
                return False

        _, _, consumer = _walk([t.grad_fn for t in roots], uses, limit=100000)
        if consumer is None:
            continue
        _hidden.remove(item)
        sites = []
        used = _add_built(sites, "use", consumer, "%s uses the written values here" % _node_name(consumer))
        made = _built_sites(node)
        if made is not None and made[0] is not None:
            sites.append({"kind": "created", "site": made[0],
                          "message": "autograd differentiates the values %s made here" % _node_name(node)})
        _hidden_found.append((("hidden", tuple(site or ())), dict(code="GW602", kind="data-write", severity="warning",
                 message="%s wrote through .detach()/.data into a tensor of the graph (%s): autograd did not record "
                         "it, so this backward differentiates the old values while the values used%s are the new "
                         "ones" % (w.op, _node_name(node), (" at line %s" % used[1]) if used else ""),
                 write_site=site, backward_site=bw_site, sites=sites, write_op=w.op)))


def _emit_hidden():
    """After the backward: the hidden writes whose saved-tensor report (GW601) did not say it."""
    items = list(_hidden_found)
    del _hidden_found[:]
    for key, fields in items:
        if tuple(fields.get("write_site") or ()) not in _silent_sites:
            _finding(key, **fields)


def _BUILT_COUNT(node):
    try:
        tag = node.metadata.get(_BUILT)
    except Exception:  # noqa: BLE001
        return -1
    return tag[3] if tag is not None else -1


# =========================================================================== stale retained graphs
_leaf_writes = None  # WeakIdKeyDictionary: leaf that requires grad -> (build count, site) of its last in-place write


def _check_stale_graph(roots, bw_site):
    """Before a backward that follows a ``retain_graph=True`` one: a node built before an
    in-place update of a parameter it takes in (an optimizer step) holds values computed from
    the old parameter; this backward differentiates those stale values (no error when the
    node did not save the parameter itself)."""
    if not _leaf_writes:
        return

    def stale(node):
        count = _BUILT_COUNT(node)
        if count < 0:
            return None
        todo = _next_nodes(node)
        for _ in range(3):  # through the untagged nodes (t(), a view) to the leaves
            more = []
            for n in todo:
                var = getattr(n, "variable", None)
                if var is not None:
                    hit = _leaf_writes.get(var)
                    if hit is not None and hit[0] > count:
                        return hit
                elif _BUILT_COUNT(n) < 0:
                    more.extend(_next_nodes(n))
            todo = more
        return None

    nodes, _, _ = _walk(roots, limit=20000)
    for node in nodes.values():
        hit = stale(node)
        if hit is None:
            continue
        sites = []
        made = _add_built(sites, "created", node, "%s computed these values from the old parameter" %
                          _node_name(node))
        if hit[1] is not None:
            sites.append({"kind": "step", "site": hit[1], "message": "the parameter was updated in place here"})
        if made is None:
            continue
        # said once the backward returned: if it raises (the node saved the parameter), the
        # version-counter error says it better
        _stale_found.append(dict(code="GW405", kind="stale-graph", severity="warning", site=made, key=("stale", tuple(made)),
                 backward_site=bw_site, sites=sites,
                 message="this backward goes through %s, built at line %s from a parameter that was updated in place "
                         "afterwards (line %s): its values, and the gradients computed from them, are stale" % (
                             _node_name(node), made[1], hit[1][1] if hit[1] else "?")))
        return


_stale_found = []


# =========================================================================== graph build sites
_BUILT = "_gradwarden_built"  # node.metadata key: (inner code, line, outer code, line, backward count)


def _tag_built(out):
    """Tag the autograd nodes a call created with where the user made them (the innermost and
    the outermost of the user's frames) and how many backward calls had started then: a
    freed-graph error can then say where the stale tensor was made and where it was reused."""
    try:
        if isinstance(out, _Tensor):
            g = out.grad_fn
            if g is None:
                return
            md = g.metadata
            if _BUILT not in md:
                md[_BUILT] = _build_tag(_caller(1))
        elif isinstance(out, (tuple, list)):
            tag = None
            for o in out:
                for t in (o if isinstance(o, (tuple, list)) else (o,)):
                    if isinstance(t, _Tensor):
                        g = t.grad_fn
                        if g is not None:
                            md = g.metadata
                            if _BUILT not in md:
                                if tag is None:
                                    tag = _build_tag(_caller(1))
                                md[_BUILT] = tag
    except Exception:  # noqa: BLE001
        _internal_error("build tag")


def _build_tag(f):
    inner = outer = None
    cache = _ucache
    while f is not None:
        code = f.f_code
        u = cache.get(code.co_filename)
        if u is None:
            u = _USER.classify(code.co_filename)
        if u:
            if inner is None:
                inner = (code, f.f_lineno)
            else:
                outer = (code, f.f_lineno)
        f = f.f_back
    _built_count[0] += 1
    return (inner, outer, _state.bw_count, _built_count[0])


_built_count = [0]  # build tags handed out (orders the nodes the mode saw made)


def _code_site(pair):
    if pair is None:
        return None
    code, line = pair
    return [_display_file(code.co_filename), line, code.co_name]


def _built_sites(node):
    """(inner site, outer site or None, backward count) where ``node`` was built, or None."""
    try:
        tag = node.metadata.get(_BUILT)
    except Exception:  # noqa: BLE001
        return None
    if tag is None:
        return None
    inner = _code_site(tag[0])
    outer = _code_site(tag[1])
    if outer is not None and inner is not None and outer[:2] == inner[:2]:
        outer = None
    return inner, outer, tag[2]


# =========================================================================== patches
def _patch_module_init():
    global _mod_sites
    import weakref as _wr

    _mod_sites = _wr.WeakKeyDictionary()
    Module = torch.nn.Module
    orig = Module.__init__

    def __init__(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        try:
            f = _caller(1)
            while f is not None:
                if f.f_code.co_name == "__init__" and f.f_locals.get("self") is self:
                    f = f.f_back
                    continue
                if _is_user(f.f_code.co_filename):
                    break
                f = f.f_back
            if f is not None and self not in _mod_sites:
                _mod_sites[self] = _site(f)
        except Exception:  # noqa: BLE001
            pass

    __init__.__wrapped__ = orig
    Module.__init__ = __init__


_inplace_sites = None  # WeakKeyDictionary: nn.Module -> where ``module.inplace = True`` was set after construction


def _patch_module_setattr():
    """``m.inplace = True`` after construction (``for m in model.modules(): ...``) is where the
    module became in-place: remember that line (the write is reported there, not at the
    construction)."""
    global _inplace_sites
    import weakref as _wr

    _inplace_sites = _wr.WeakKeyDictionary()
    Module = torch.nn.Module
    orig = Module.__setattr__

    def __setattr__(self, name, value):
        orig(self, name, value)
        if name == "inplace" and value is True:
            try:
                f = _caller(1)
                while f is not None:
                    if f.f_code.co_name == "__init__" and f.f_locals.get("self") is self:
                        return  # chosen at construction: the construction site says it
                    if _is_user(f.f_code.co_filename):
                        _inplace_sites[self] = _site(f)
                        return
                    f = f.f_back
            except Exception:  # noqa: BLE001
                pass

    __setattr__.__wrapped__ = orig
    Module.__setattr__ = __setattr__


def _built_site(module):
    """Where ``module`` was made in-place: the ``inplace = True`` assignment, else its construction."""
    site = _inplace_sites.get(module) if _inplace_sites is not None else None
    if site is None and _mod_sites is not None:
        site = _mod_sites.get(module)
    return site


def _patch_data_setter():
    global _data_sites
    import weakref as _wr

    try:
        from torch.utils.weak import WeakIdKeyDictionary
    except ImportError:  # older torch
        WeakIdKeyDictionary = None
    if WeakIdKeyDictionary is None:
        return
    _data_sites = WeakIdKeyDictionary()
    global _expand_made, _aliases, _leaf_writes
    _expand_made = WeakIdKeyDictionary()
    _aliases = WeakIdKeyDictionary()
    _leaf_writes = WeakIdKeyDictionary()
    base = torch._C.TensorBase.data

    def _get(self):
        out = base.__get__(self, type(self))
        if self.grad_fn is not None:
            _note_alias(self, out)
        return out

    def _set(self, value):
        base.__set__(self, value)
        try:
            if _internal_overlap(value):
                _data_sites[self] = _site(_user_frame(_caller(1)))
        except Exception:  # noqa: BLE001
            pass

    torch.Tensor.data = property(_get, _set, doc=getattr(base, "__doc__", None))


def _patch_custom_backward():
    from torch.autograd import function as F

    cls = getattr(F, "BackwardCFunction", None)
    if cls is None or not hasattr(cls, "apply"):
        return
    orig = cls.apply

    def apply(self, *args):
        # storage -> why writing it in place is a hazard (None: private buffer, harmless)
        keys = {}
        try:
            user = _state.user_grads
            for a in args:
                if isinstance(a, _Tensor):
                    k = _storage_key(a)
                    if k is not None:
                        if _internal_overlap(a):
                            keys[k] = "expanded"
                        elif k in user:
                            keys[k] = "user"
                        else:
                            keys[k] = None
        except Exception:  # noqa: BLE001
            _internal_error("custom backward")
        _grad_outputs.append(keys)
        try:
            # backward runs inside the mode's handling of ``Tensor.backward`` (the mode is off
            # there): a custom backward is user code, so its writes are watched again
            if _MODE is not None and not _state.suspended and _user_function(self) and not _mode_active():
                with _MODE:
                    out = orig(self, *args)
            else:
                out = orig(self, *args)
        finally:
            _grad_outputs.pop()
        if keys.get("writes"):
            try:
                _watch_shared_grads(self, args, keys["writes"])
            except Exception:  # noqa: BLE001
                _internal_error("shared grad")
        return out

    apply.__wrapped__ = orig
    cls.apply = apply


_grad_watch = []  # hook handles on the nodes that may receive a gradient buffer a custom backward overwrote


def _watch_shared_grads(node, args, writes):
    """A custom backward wrote one of its grad_outputs in place. Harmless when the buffer is its
    own; but autograd hands one gradient tensor to several nodes (the two inputs of an ``a + b``
    get the same one): every node of this backward that has yet to run is watched, and one
    that receives the overwritten buffer is proof that it computes with the wrong gradient."""
    written = []
    for a in args:
        if isinstance(a, _Tensor):
            site = writes.get(_storage_key(a))
            if site is not None:
                written.append((a, site))
    roots = _state.cur_roots
    if not written or not roots:
        return
    nodes, _, _ = _walk(roots, limit=20000)
    # the nodes below the writer get what it returns (often the written buffer itself): that is
    # its gradient, not a shared one
    below, _, _ = _walk([node], limit=20000)
    for other in nodes.values():
        if id(other) in below:
            continue
        try:
            _grad_watch.append(other.register_prehook(_shared_grad_hook(other, node, written)))
        except Exception:  # noqa: BLE001
            continue


def _shared_grad_hook(other, writer, written):
    def hook(grad_outputs):
        try:
            for g in grad_outputs:
                if g is None:
                    continue
                for t, site in written:
                    if g is t or (_storage_key(g) == _storage_key(t) and _overlaps(g, t)):
                        sites = []
                        used = _add_built(sites, "use", other, "%s receives the overwritten gradient" %
                                          _node_name(other))
                        _finding(("shared-grad", tuple(site or ())), code="GW303", kind="grad-output-write",
                                 severity="warning", write_site=site, sites=sites,
                                 backward_site=_state.cur_bw[1] if _state.cur_bw else None,
                                 message="the custom backward of %s writes into grad_output in place, but autograd "
                                         "hands the same gradient buffer to %s%s: that node computes with the "
                                         "overwritten values (silently wrong gradients)" % (
                                             _node_name(writer), _node_name(other),
                                             (" (line %s)" % used[1]) if used else ""))
                        return None
        except Exception:  # noqa: BLE001
            _internal_error("shared grad hook")
        return None

    return hook


def _unwatch_grads():
    handles = list(_grad_watch)
    del _grad_watch[:]
    for h in handles:
        try:
            h.remove()
        except Exception:  # noqa: BLE001
            pass


# Tensor methods whose name ends in "_" that do not write data (no version bump)
_NOT_WRITES = frozenset(("share_memory_", "retain_grad", "record_stream", "rename_", "pin_memory_",
                         "_fix_weakref", "_coalesced_"))
_INPLACE_DUNDERS = frozenset(("__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                              "__imod__", "__ipow__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                              "__irshift__", "__imatmul__"))
_write_kind = {}  # torch function -> 0 (reads only), 1 (writes its first argument), 2 (writes every argument)


def _kind_of_function(func):
    name = getattr(func, "__name__", "") or ""
    if name in _INPLACE_DUNDERS:
        kind = 1
    elif name.endswith("_") and not name.endswith("__") and name not in _NOT_WRITES:
        # fused optimizer kernels write several lists (params, moments ...)
        kind = 2 if name.startswith("_fused_") else 1
    else:
        kind = 0
    try:
        _write_kind[func] = kind
    except TypeError:  # unhashable callable
        pass
    return kind


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


def _function_targets(kind, args, kwargs):
    """The tensors a call writes: its first argument (in-place methods, ``inplace=True``), every
    tensor argument (fused kernels), and ``out=``."""
    T = _Tensor
    out = []
    if kind == 2:
        for a in args:
            if isinstance(a, T):
                out.append(a)
            elif isinstance(a, (list, tuple)):
                out.extend(x for x in a if isinstance(x, T))
    elif kind == 1 and args:
        a = args[0]
        if isinstance(a, T):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, T))
    if kwargs:
        o = kwargs.get("out")
        if isinstance(o, T):
            out.append(o)
        elif isinstance(o, (list, tuple)):
            out.extend(x for x in o if isinstance(x, T))
    return out


def _make_mode():
    """A ``TorchFunctionMode``: it sees the calls made from Python (the user's code, torch's own
    Python code: nn modules, optimizers), above autograd, and none of the aten ops that C++
    kernels and composite implementations run internally (an LSTM cell's ``sigmoid_`` on its
    private gates). Unlike a dispatch mode, it does not make torch take its "tensor subclass"
    code paths (out-of-place derivative formulas), so the program runs as it does plainly."""
    from torch.overrides import TorchFunctionMode

    kinds = _write_kind
    expand_funcs = _expand_funcs
    detach = torch.Tensor.detach
    for f in (getattr(torch.Tensor, "expand", None), getattr(torch.Tensor, "expand_as", None),
              getattr(torch.Tensor, "broadcast_to", None), getattr(torch, "broadcast_to", None)):
        if f is not None:
            expand_funcs.add(f)

    class GradwardenMode(TorchFunctionMode):
        """Only mutating calls cost more than a dict lookup."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            try:
                kind = kinds.get(func)
            except TypeError:
                kind = 0
            if kind is None:
                kind = _kind_of_function(func)
            if kind == 0:
                if kwargs:
                    if kwargs.get("inplace") is True:
                        kind = 1
                    elif kwargs.get("out") is not None:
                        kind = 3
                if kind == 0:
                    if func is detach:
                        out = func(*args, **kwargs) if kwargs else func(*args)
                        _note_alias(args[0] if args else None, out)
                        return out
                    packs = _packs[0]
                    if _expanded or func in expand_funcs:
                        out = _track_views(func, args, kwargs)
                    elif kwargs:
                        out = func(*args, **kwargs)
                    else:
                        out = func(*args)
                    if packs != _packs[0]:
                        _check_packed_during(func, packs)
                    _tag_built(out)
                    return out
            out = _on_write(func, kind, args, kwargs)
            _tag_built(out)
            return out

    return GradwardenMode()


# =========================================================================== torch.compile
def _suspend_instrumentation():
    """Take the mode and the saved-tensor hooks off while a compiled region runs (and while
    Dynamo compiles it): Dynamo would otherwise trace them (recompiling the mode's code until it
    hits its limit), and compiled code must compute what it computes plainly. Returns the
    function that puts them back."""
    _state.suspended += 1
    popped_mode = popped_hooks = False
    try:
        C = torch._C
        if C._len_torch_function_stack() and C._get_function_stack_at(C._len_torch_function_stack() - 1) is _MODE:
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
                torch._C._push_on_torch_function_stack(_MODE)
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


def install(config):
    """Install every hook (torch is imported)."""
    global _current_node, _weakref, _recent
    import weakref
    from collections import deque

    _weakref = weakref.ref
    _recent = deque(maxlen=64)
    _current_node = getattr(torch._C, "_current_autograd_node", lambda: None)
    _state.max_steps = config.get("max_steps")
    _patch_module_init()
    _patch_module_setattr()
    _patch_data_setter()
    _patch_custom_backward()
    _patch_compile()
    _patch_warnings()
    torch.autograd.backward = _wrap_backward(torch.autograd.backward, "backward")
    torch.autograd.grad = _wrap_backward(torch.autograd.grad, "grad")
    hooks = torch.autograd.graph.saved_tensors_hooks(_pack, _unpack)
    hooks.__enter__()
    global _MODE
    mode = _MODE = _make_mode()
    mode.__enter__()
    return hooks, mode


_MODE = None


def _user_function(node):
    """False for the Functions of torch's compiler stack (AOTAutograd's compiled backward)."""
    cls = getattr(node, "_forward_cls", None)
    module = getattr(cls, "__module__", "") or ""
    return not module.startswith(("torch._functorch", "torch._dynamo", "torch._inductor", "torch._higher_order_ops"))


def _mode_active():
    try:
        stack = torch._C._len_torch_function_stack()
        return any(torch._C._get_function_stack_at(i) is _MODE for i in range(stack))
    except Exception:  # noqa: BLE001
        return True


_current_node = None
_weakref = None


# =========================================================================== run
def _stop(reason):
    """End the run now (``--max-steps``): report, then leave without running more user code."""
    _state.stopping = True
    _finish(reason, 0)
    os._exit(0)


def _finish(status, code, exc=None):
    cov = _state.coverage
    if cov is not None:
        cov.stop()
    _flush_lines()
    fields = {"status": status, "code": code, "backward_calls": _state.bw_count, "findings": _state.findings,
              "device": used_device(torch, _state.device) if torch is not None else "unknown"}
    if exc is not None:
        fields["exc_type"] = type(exc).__name__
        import re

        text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", str(exc)).strip()  # torch colours some messages
        fields["exc"] = text.splitlines()[0][:500] if text else ""
    _emit("exit", **fields)


def _decode_config(text):
    pad = "=" * (-len(text) % 4)
    return json.loads(base64.urlsafe_b64decode(text + pad).decode("utf-8"))


def encode_config(config):
    return base64.urlsafe_b64encode(json.dumps(config, separators=(",", ":")).encode("utf-8")).decode("ascii").rstrip("=")


def _parse_argv(argv):
    if len(argv) < 2 or argv[0] != "--gw-config":
        raise ValueError("usage: _child.py --gw-config CONFIG [--] TARGET ARGS...")
    config = _decode_config(argv[1])
    rest = argv[2:]
    if rest and rest[0] == "--":
        rest = rest[1:]
    return config, rest


def _import_torch():
    global torch, _Tensor
    import torch as _torch

    torch = _torch
    _Tensor = _torch.Tensor
    return _torch


class _PytestPlugin(object):
    """Reports autograd errors that pytest catches."""

    def pytest_exception_interact(self, node, call, report):
        excinfo = getattr(call, "excinfo", None)
        if excinfo is not None:
            try:
                report_exception(excinfo.value, excinfo.tb)
            except Exception:  # noqa: BLE001
                pass


def _run_target(config, rest):
    mode = config.get("mode", "script")
    target = config.get("target")
    import runpy

    if mode == "script":
        path = os.path.abspath(target)
        sys.argv = [target] + list(rest)
        sys.path.insert(0, os.path.dirname(path))
        runpy.run_path(path, run_name="__main__")
        return 0
    if mode == "module":
        sys.argv = [target] + list(rest)
        sys.path.insert(0, os.getcwd())
        runpy.run_module(target, run_name="__main__", alter_sys=True)
        return 0
    if mode == "pytest":
        sys.path.insert(0, os.getcwd())
        import pytest

        sys.argv = ["pytest"]
        args = [target] + list(rest) + ["-p", "no:cacheprovider"]
        return int(pytest.main(args, plugins=[_PytestPlugin()]))
    raise ValueError("unknown mode %r" % (mode,))


def _print_user_traceback(exc):
    """Print the traceback as ``python script.py`` would: without the bridge's own frames (the
    mode's ``__torch_function__`` sits between the user's line and torch's in every in-place
    call), nor runpy's."""
    import traceback

    def ours(filename):
        return filename == __file__ or filename == "<frozen runpy>" or filename.endswith(os.sep + "runpy.py")

    def strip(te, seen):
        if te is None or id(te) in seen:
            return
        seen.add(id(te))
        kept = [f for f in te.stack if not ours(f.filename)]
        if kept:
            te.stack = traceback.StackSummary.from_list(kept)
        strip(te.__cause__, seen)
        strip(te.__context__, seen)
        for group in getattr(te, "exceptions", None) or ():
            strip(group, seen)

    try:
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        strip(te, set())
        sys.stderr.write("".join(te.format()))
    except Exception:  # noqa: BLE001
        traceback.print_exception(type(exc), exc, exc.__traceback__)


def _user_files(config):
    include = []
    if config.get("mode", "script") == "script" and config.get("target"):
        include.append(config["target"])
    elif config.get("mode") == "module" and config.get("target"):
        try:  # an installed module is still the user's target
            import importlib.util

            sys.path.insert(0, os.getcwd())
            try:
                spec = importlib.util.find_spec(config["target"])
            finally:
                del sys.path[0]
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                include.append(spec.origin)
        except Exception:  # noqa: BLE001 - runpy will say what is wrong
            pass
    files = UserFiles(include=include)
    files.add_excluded(os.path.dirname(os.path.abspath(torch.__file__)))
    return files


def _instrument(config):
    """Hooks, mode, patches and coverage of this process (torch is imported)."""
    global _USER, _ucache
    _USER = _user_files(config)
    _ucache = _USER.cache
    install(config)
    _patch_spawn()
    if config.get("coverage", True):
        _state.coverage = Coverage(_is_user)
    events = _state.events

    def _after_fork():
        events.reopen_after_fork()
        _state.reported = set(_state.reported)

    try:
        os.register_at_fork(after_in_child=_after_fork)
    except AttributeError:
        pass


# =========================================================================== spawned processes
def _patch_spawn():
    """Processes started with the ``spawn`` start method (``torch.multiprocessing.spawn``,
    ``mp.get_context("spawn").Process``, DataLoader workers with it) run a fresh interpreter:
    its command line is made to load this file first, which instruments it (``spawned_main``)
    before ``multiprocessing`` unpickles and runs the target. ``fork`` needs nothing (the
    hooks are inherited; ``register_at_fork`` opens the child's own events file)."""
    try:
        import multiprocessing.spawn as mp_spawn
    except ImportError:
        return
    orig = mp_spawn.get_command_line
    if getattr(orig, "_gradwarden", False):
        return
    here = os.path.abspath(__file__)

    def get_command_line(**kwds):
        argv = orig(**kwds)
        try:
            i = argv.index("-c")
        except ValueError:  # a frozen executable: left alone
            return argv
        boot = ("import importlib.util as _gw_u, sys as _gw_s\n"
                "_gw_p = _gw_u.spec_from_file_location('_gradwarden_child', %r)\n"
                "_gw_m = _gw_u.module_from_spec(_gw_p); _gw_s.modules['_gradwarden_child'] = _gw_m\n"
                "_gw_p.loader.exec_module(_gw_m); _gw_m.spawned_main(%r)\n"
                "del _gw_u, _gw_s, _gw_p, _gw_m\n" % (here, _state.config_text))
        argv = list(argv)
        argv[i + 1] = boot + argv[i + 1]
        return argv

    get_command_line._gradwarden = True
    get_command_line.__wrapped__ = orig
    mp_spawn.get_command_line = get_command_line


def spawned_main(config_text):
    """Instrument a process started with ``spawn`` (see ``_patch_spawn``): same hooks as the
    main process, its own events file; ``--max-steps`` applies to the main process only."""
    try:
        config = _decode_config(config_text)
        config["max_steps"] = None
        _state.config = config
        _state.config_text = config_text
        _state.events = Events(config.get("out") or ".")
        _import_torch()
        _instrument(config)
        _emit("spawned", ppid=os.getppid())
        import atexit

        atexit.register(_flush_lines)
        if _state.coverage is not None:
            _state.coverage.start()
    except Exception:  # noqa: BLE001 - the worker must run even if we cannot watch it
        _internal_error("spawned process")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        config, rest = _parse_argv(argv)
    except Exception as exc:  # noqa: BLE001
        sys.stderr.write("gradwarden child: bad arguments: %s\n" % (exc,))
        return EXIT_BAD_CONFIG
    out_dir = config.get("out") or "."
    try:
        os.makedirs(out_dir, exist_ok=True)
        events = Events(out_dir)
    except OSError as exc:
        sys.stderr.write("gradwarden child: cannot write to %s: %s\n" % (out_dir, exc))
        return EXIT_BAD_CONFIG
    _state.events = events
    _state.config = config
    _state.config_text = argv[1]
    if config.get("cwd"):
        try:
            os.chdir(config["cwd"])
        except OSError as exc:
            events.emit("fatal", reason="cwd", message="cannot enter %s: %s" % (config["cwd"], exc))
            return EXIT_BAD_CONFIG
    for key, value in child_environment(config, os.environ).items():
        os.environ[key] = value
    events.emit("hello", protocol=PROTOCOL, python=sys.version.split()[0], executable=sys.executable,
                argv=[config.get("target")] + list(rest), mode=config.get("mode", "script"))
    try:
        _import_torch()
    except ImportError as exc:
        events.emit("fatal", reason="torch-missing",
                    message="torch is not installed in %s (%s)" % (sys.executable, exc))
        return EXIT_TORCH_MISSING  # the parent says it (once)
    device, problem = select_device(config, torch, os.environ)
    if problem:
        events.emit("fatal", reason="no-cuda", message=problem)
        return EXIT_NO_CUDA  # the parent says it (once)
    _state.device = device
    try:
        import faulthandler

        _crash = open(os.path.join(out_dir, "crash.%d.txt" % os.getpid()), "w")
        faulthandler.enable(file=_crash, all_threads=False)
        _state._crash = _crash
    except Exception:  # noqa: BLE001
        pass

    _instrument(config)
    try:
        import signal

        def _on_term(signum, frame):
            _finish("terminated", 128 + signum)
            os._exit(128 + signum)

        signal.signal(signal.SIGTERM, _on_term)
    except (ValueError, OSError, AttributeError):
        pass
    events.emit("start", torch=torch.__version__, device=device, cuda_build=getattr(torch.version, "cuda", None),
                coverage=(_state.coverage is not None))
    if _state.coverage is not None:
        _state.coverage.start()
    code = 0
    try:
        code = _run_target(config, rest)
        if isinstance(code, int) and code not in (0, None):
            _finish("failed", code)
        else:
            _finish("ok", 0)
    except SystemExit as exc:
        c = exc.code
        code = c if isinstance(c, int) else (0 if c is None else 1)
        _finish("ok" if code == 0 else "failed", code)
    except KeyboardInterrupt as exc:
        code = 130
        _finish("interrupted", code, exc)
    except BaseException as exc:  # noqa: BLE001 - the user's error: report, then show it like python
        try:
            report_exception(exc)
        except Exception:  # noqa: BLE001
            pass
        code = 1
        _finish("error", code, exc)
        _print_user_traceback(exc)
    try:
        sys.stdout.flush()
    except Exception:  # noqa: BLE001
        pass
    return code


# =========================================================================== zygote
def zygote_main():
    """A pre-warmed parent: import torch once, then fork one instrumented run per request.

    Requests come as JSON lines on stdin, replies go to stdout (see session.Zygote). Each run
    is its own session (process group); nothing is instrumented in the zygote itself, and it
    runs no torch op, so forking it is safe (no threads, no CUDA)."""
    import select

    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(2, 1)  # anything printed by imports goes to stderr, never into the protocol

    def reply(obj):
        proto.write(json.dumps(obj) + "\n")
        proto.flush()

    try:
        _import_torch()
    except ImportError as exc:
        reply({"fatal": "torch-missing", "message": "torch is not installed in %s (%s)" % (sys.executable, exc)})
        return EXIT_TORCH_MISSING
    reply({"ready": True, "torch": torch.__version__, "python": sys.version.split()[0], "pid": os.getpid()})
    running = {}
    buf = b""
    stdin_open = True
    while stdin_open or running:
        if stdin_open:
            ready, _, _ = select.select([0], [], [], 0.05)
        else:
            ready = []
            time.sleep(0.05)
        if ready:
            data = os.read(0, 65536)
            if not data:
                stdin_open = False
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if not line.strip():
                    continue
                try:
                    req = json.loads(line.decode("utf-8"))
                except ValueError:
                    continue
                pid = _zygote_fork(req, devnull, proto)
                if pid:
                    running[pid] = req.get("id")
                    reply({"id": req.get("id"), "pid": pid})
        while running:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            rid = running.pop(pid, None)
            try:
                code = os.waitstatus_to_exitcode(status)
            except (AttributeError, ValueError):
                code = (status >> 8) if (status & 0x7F) == 0 else -(status & 0x7F)
            reply({"id": rid, "pid": pid, "exit": code})
    return 0


def _exit_like_python():
    """What the interpreter does at exit (join threads, atexit), before os._exit."""
    try:
        import threading

        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    except Exception:  # noqa: BLE001
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except Exception:  # noqa: BLE001
        pass


def _zygote_fork(req, devnull, proto):
    try:
        pid = os.fork()
    except OSError as exc:
        proto.write(json.dumps({"id": req.get("id"), "error": str(exc)}) + "\n")
        proto.flush()
        return 0
    if pid:
        return pid
    code = 1
    try:
        os.setsid()
        os.dup2(devnull, 0)
        targets = {"stdout": 1, "stderr": 2}
        for name in ("stdout", "stderr"):
            where = req.get(name)
            if where == "devnull":
                os.dup2(devnull, targets[name])
            elif where == "stdout":
                os.dup2(1, 2)
            elif where:
                fd = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, targets[name])
                os.close(fd)
        try:
            proto.close()
        except Exception:  # noqa: BLE001
            pass
        env = req.get("env")
        if isinstance(env, dict):
            os.environ.clear()
            os.environ.update({str(k): str(v) for k, v in env.items()})
        if req.get("cwd"):
            os.chdir(req["cwd"])
        argv = list(req.get("argv") or [])
        sys.argv = [__file__] + argv
        code = main(argv)
        _exit_like_python()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code if isinstance(code, int) else 1)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--gw-zygote"]:
        sys.exit(zygote_main())
    sys.exit(main())
