"""A custom backward whose result does not depend on its incoming gradient (GW709).

``backward(ctx, grad_output)`` computes a vector-Jacobian product: it is linear in
``grad_output``. Called with the incoming gradients multiplied by -2 it must return its
gradients multiplied by -2 (exactly: scaling by a power of two is exact in floating point).
A returned gradient that is non-zero and comes back *unchanged* does not depend on
``grad_output`` at all: the chain rule is dropped. It is wrong wherever the incoming gradient
is not 1, so the probe is made only when it is not (a Function whose output is the loss itself
gets 1 and computes the right numbers).

The probe is a second call of the user's backward, right after the real one (whose results are
what autograd gets), made only when it cannot change what the program computes:

- grad mode is off in that backward (no ``create_graph``: no graph is built);
- the backward's own code stores no global, nonlocal or attribute other than on ``ctx``,
  names no printing, logging or warning call and no container-mutating method;
- it runs on clones of the incoming gradients; any in-place write into a tensor it did not
  make itself, a nested backward, a saved tensor found modified, aborts it before it happens;
- ``ctx``'s attributes are compared before and after (and put back), its output to stdout,
  stderr and warnings is swallowed (and aborts it), the random number generators are restored;
- once or twice per Function class and call site (``_MAX_PROBES``), never after a finding.

Only the backward of Functions defined in the user's files is probed.
"""
import dis
import io
import sys

import torch

from . import probestate as _ps
from .graphtags import _built_sites
from .report import _finding, _internal_error, _state
from .tensors import _storage_key
from .userfiles import _display_file, _is_user

_Tensor = torch.Tensor
_MAX_PROBES = 2
_probes = {}  # (Function class, call site) -> probes made (a finding sets it to _MAX_PROBES)
_code_ok = {}  # code object -> True when its bytecode shows no side effect of its own

_MUTATORS = frozenset(("append", "extend", "insert", "pop", "popitem", "update", "setdefault", "discard",
                       "remove", "clear", "write", "writelines", "put_nowait", "appendleft", "extendleft",
                       "send", "register_buffer", "register_parameter", "add_module", "__setitem__"))
_LOUD = frozenset(("print", "warn", "warnings", "logging", "logger", "log_info", "breakpoint", "input", "open",
                   "exit", "quit", "setattr", "delattr", "globals", "exec", "eval"))
_STORES = frozenset(("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF", "DELETE_ATTR", "STORE_NAME",
                     "DELETE_NAME", "IMPORT_NAME"))


def _quiet_code(code):
    """True when ``code`` itself (not what it calls) has no side effect outside ``ctx``."""
    ok = _code_ok.get(code)
    if ok is not None:
        return ok
    ok = True
    try:
        if set(code.co_names) & (_MUTATORS | _LOUD):
            ok = False
        else:
            ctx = code.co_varnames[0] if code.co_argcount else None
            prev = None
            for ins in dis.get_instructions(code):
                if ins.opname in _STORES:
                    ok = False
                    break
                if ins.opname == "STORE_ATTR" and not (prev is not None and prev.opname == "LOAD_FAST"
                                                       and prev.argval == ctx):
                    ok = False
                    break
                prev = ins
            for const in code.co_consts:  # nested functions and comprehensions
                if ok and hasattr(const, "co_code"):
                    ok = _quiet_code(const)
    except Exception:  # noqa: BLE001
        ok = False
    _code_ok[code] = ok
    return ok


def _snapshot(node):
    """``ctx``'s attributes: name -> (value, fingerprint, shallow copy of a container's items)."""
    out = {}
    try:
        items = list(vars(node).items())
    except TypeError:
        return out
    for name, value in items:
        if isinstance(value, _Tensor):
            out[name] = (value, (id(value), value._version), None)
        elif isinstance(value, dict):
            out[name] = (value, (id(value), tuple((k, id(v)) for k, v in value.items())), dict(value))
        elif isinstance(value, (list, set)):
            out[name] = (value, (id(value), tuple(id(v) for v in value)), list(value))
        else:
            out[name] = (value, (id(value), None), None)
    return out


def _same(before, after):
    return before.keys() == after.keys() and all(before[k][1] == after[k][1] for k in before)


def _restore_ctx(node, before):
    """Put ``ctx`` back as the real backward left it (the probe rebound or filled something)."""
    try:
        for name in list(vars(node)):
            if name not in before:
                delattr(node, name)
        for name, (value, _, items) in before.items():
            setattr(node, name, value)
            if isinstance(value, dict):
                value.clear()
                value.update(items)
            elif isinstance(value, list):
                value[:] = items
            elif isinstance(value, set):
                value.clear()
                value.update(items)
    except Exception:  # noqa: BLE001
        _internal_error("chain-rule probe: ctx")


def _trivial(t):
    """True when every element of ``t`` is 1 (the output is the loss: a backward that ignores
    it computes the right numbers), or every element is 0 (the output is not used)."""
    with torch._C.DisableTorchFunction():
        return bool((t == 1).all()) or not bool(t.ne(0).any())


def after_backward(node, args, out):
    """Called by the custom-backward patch after the real backward of ``node`` returned
    ``out`` for the incoming gradients ``args``."""
    if _state.suspended or _ps.fresh or torch.is_grad_enabled():
        return
    try:
        cls = getattr(node, "_forward_cls", None)
        if cls is None or getattr(cls, "boxed_grads_call", False):
            return
        get_user_fn = getattr(node, "_get_user_fn", None)
        user_fn = get_user_fn() if get_user_fn is not None else getattr(cls, "backward", None)
        try:  # @once_differentiable and other functools.wraps decorators: the user's own code
            import inspect

            code = getattr(inspect.unwrap(user_fn), "__code__", None)
        except Exception:  # noqa: BLE001
            code = None
        if code is None or not _is_user(code.co_filename) or not _quiet_code(code):
            return
        built = _built_sites(node)
        call = built[0] if built is not None else None
        key = (cls, tuple(call or ()))
        if _probes.get(key, 0) >= _MAX_PROBES:
            return
        incoming = [a for a in args if isinstance(a, _Tensor)]
        if not incoming or any(not (a.is_floating_point() or a.is_complex()) for a in incoming):
            return
        if all(_trivial(a) for a in incoming):
            return
        outs = out if isinstance(out, tuple) else (out,)
        if any(o is not None and not isinstance(o, _Tensor) for o in outs):
            return
        try:  # a gradient returned where none is needed (an input that is a number, or does not
            # require grad) is never used: its chain rule does not matter (for a number, torch raises: GW309)
            needs = tuple(node.needs_input_grad)
        except Exception:  # noqa: BLE001
            needs = ()
        with torch._C.DisableTorchFunction():
            candidates = [i for i, o in enumerate(outs) if o is not None and o.is_floating_point()
                          and (i >= len(needs) or needs[i])
                          and bool(o.ne(0).any()) and bool(torch.isfinite(o).all())]
        if not candidates:
            return
        _probes[key] = _probes.get(key, 0) + 1
        again = _probe(node, user_fn, code, args)
        if again is None:
            return
        again = again if isinstance(again, tuple) else (again,)
        if len(again) != len(outs):
            return
        dropped = []
        with torch._C.DisableTorchFunction():
            for i in candidates:
                o2 = again[i]
                if isinstance(o2, _Tensor) and o2.shape == outs[i].shape and torch.equal(o2, outs[i]):
                    dropped.append(i)
        if dropped:
            _probes[key] = _MAX_PROBES
            _report(cls, call, dropped, _ret_line[0])
    except Exception:  # noqa: BLE001
        _internal_error("chain-rule probe")


_ret_line = [None]  # [file, line, function] of the return the probe's call went through


def _probe(node, user_fn, code, args):
    """The user's backward called again on the incoming gradients times -2; None when it could
    not run without a side effect."""
    before = _snapshot(node)
    with torch._C.DisableTorchFunction():
        scaled = tuple(a.detach().clone().mul_(-2) if isinstance(a, _Tensor) else a for a in args)
    fresh = set()
    for a in scaled:
        if isinstance(a, _Tensor):
            fresh.add(_storage_key(a))
    rng = _rng_state(args)
    stdout, stderr = sys.stdout, sys.stderr
    sink_out, sink_err = io.StringIO(), io.StringIO()
    import warnings

    showwarning = warnings.showwarning
    warned = []
    profiler = sys.getprofile()
    _ret_line[0] = None

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code:
            _ret_line[0] = [_display_file(code.co_filename), frame.f_lineno, code.co_name]

    result = None
    _ps.fresh.append(fresh)
    try:
        sys.stdout, sys.stderr = sink_out, sink_err
        warnings.showwarning = lambda *a, **k: warned.append(a)
        sys.setprofile(profile)
        try:
            result = user_fn(node, *scaled)
        finally:
            sys.setprofile(profiler)
    except (KeyboardInterrupt, SystemExit):
        raise  # the user's, not the probe's
    except BaseException:  # noqa: BLE001 - ProbeAbort, or the second call fails: no verdict
        result = None
    finally:
        del _ps.fresh[:]
        sys.stdout, sys.stderr = stdout, stderr
        warnings.showwarning = showwarning
        _restore_rng(rng)
    if not _same(before, _snapshot(node)):
        _restore_ctx(node, before)
        return None
    if warned or sink_out.getvalue() or sink_err.getvalue():
        return None
    return result


def _rng_state(args):
    state = {"cpu": torch.random.get_rng_state()}
    try:
        devices = {a.device for a in args if isinstance(a, _Tensor) and a.device.type == "cuda"}
        if devices:
            state["cuda"] = [(d, torch.cuda.get_rng_state(d)) for d in devices]
    except Exception:  # noqa: BLE001
        pass
    if "random" in sys.modules:
        state["random"] = sys.modules["random"].getstate()
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            state["numpy"] = np.random.get_state()
        except Exception:  # noqa: BLE001
            pass
    return state


def _restore_rng(state):
    try:
        torch.random.set_rng_state(state["cpu"])
        for d, s in state.get("cuda", ()):
            torch.cuda.set_rng_state(s, d)
        if "random" in state:
            sys.modules["random"].setstate(state["random"])
        if "numpy" in state:
            sys.modules["numpy"].random.set_state(state["numpy"])
    except Exception:  # noqa: BLE001
        _internal_error("rng restore")


def note_fresh(out):
    """A tensor made while a probe runs: the probe may write it."""
    fresh = _ps.fresh[-1]
    if isinstance(out, _Tensor):
        fresh.add(_storage_key(out))
    elif isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, _Tensor):
                fresh.add(_storage_key(o))


def check_write(targets):
    """Before an in-place write while a probe runs: only the probe's own tensors."""
    fresh = _ps.fresh[-1]
    for t in targets:
        if _storage_key(t) not in fresh:
            raise _ps.ProbeAbort()


def _report(cls, call, dropped, ret):
    name = cls.__name__
    which = ", ".join(str(i) for i in dropped)
    bw = _state.cur_bw[1] if _state.cur_bw else None
    sites = []
    if call is not None:
        sites.append({"kind": "call", "site": call, "message": "%s is applied here" % name})
    where = ret or call
    _finding(("chain-rule", name, tuple(where or ())), code="GW709", kind="chain-rule-dropped", severity="warning",
             site=where, backward_site=bw, sites=sites,
             message="`%s.backward` returned the same gradient%s (input%s %s) when called again with its incoming "
                     "gradient multiplied by -2: the gradient it returns does not depend on grad_output, so the chain "
                     "rule is dropped; the incoming gradient here is not 1, so every gradient below this Function is "
                     "silently wrong (multiply by grad_output)" % (
                         name, "s" if len(dropped) > 1 else "", "s" if len(dropped) > 1 else "", which))
