"""A custom Function's backward that breaks the contract autograd checks once it returns (GW307):
fewer gradients than ``forward`` took inputs (or extra ones that are not None), or a gradient
whose shape does not fit its input. torch raises only after the user's ``backward`` returned,
from the engine, so the traceback's innermost user frame is the ``loss.backward()`` line; the
line the fix changes is the ``return`` of that ``backward``. This module finds it: the return
lines of the user's backward code (read from its bytecode; when there are several, the one that
ran, seen by a profile function set only while that backward runs), checked at once against
``needs_input_grad`` (one entry per forward input) for the count, and kept per node name for the
shape message torch raises afterwards.

``ctx.save_for_backward(idx, k)`` given a value that is not a tensor (GW738) raises a TypeError
from ``apply`` once ``forward`` returned: shown at that ``save_for_backward`` call, read from the
bytecode of the Function's ``forward`` (or ``setup_context``), the ``apply`` as a related call."""
import re
import sys

import torch

from .report import _finding, _internal_error, _mark, _state
from .userfiles import _display_file, _is_user, _lined_instructions, _site, _user_frame

_Tensor = torch.Tensor

_returns = {}  # code -> sorted return lines of that code (an empty tuple: none readable)
_last = {}  # node class name -> [file, line, function] of the return its backward last ran
_reported = set()  # node class names whose count was already reported here

# (a gradient for an input that was not a tensor, GW309, is raised by the engine in the same way)
_NAMED = re.compile(r"\b[Ff]unction (\w+) returned (?:an |a )?(incorrect number of gradients|invalid gradient|"
                    r"gradient different than None)")
_INDEX = re.compile(r"invalid gradient at index (\d+)")
_codes = {}  # node class name -> the user's backward code whose return was noted


def _backward_code(node):
    cls = getattr(node, "_forward_cls", None)
    fn = getattr(cls, "backward", None)
    if fn is None:
        return None
    if getattr(fn, "__code__", None) is getattr(torch.autograd.Function.backward, "__code__", 0):
        fn = getattr(cls, "vjp", None)  # a Function that defines vjp instead
    code = getattr(fn, "__code__", None)
    if code is None or not _is_user(code.co_filename):
        return None
    return code


def _return_lines(code):
    lines = _returns.get(code)
    if lines is None:
        try:
            lines = tuple(sorted({line for line, ins in _lined_instructions(code)
                                  if ins.opname in ("RETURN_VALUE", "RETURN_CONST")}))
        except Exception:  # noqa: BLE001
            lines = ()
        _returns[code] = lines
    return lines


def run_backward(node, call):
    """``call()`` runs the user's backward of ``node``; returns its output. Notes which ``return``
    ran (a profile function watches that frame only when the code has several)."""
    code = _backward_code(node) if not _state.suspended else None
    if code is None:
        return call()
    lines = _return_lines(code)
    if len(lines) <= 1 or sys.getprofile() is not None:  # one return, or someone else profiles
        out = call()
        line = lines[-1] if lines else code.co_firstlineno
    else:
        seen = []

        def profile(frame, event, arg):
            if event == "return" and frame.f_code is code:
                seen.append(frame.f_lineno)

        sys.setprofile(profile)
        try:
            out = call()
        finally:
            sys.setprofile(None)
        line = seen[-1] if seen else (lines[-1] if lines else code.co_firstlineno)
    name = type(node).__name__
    site = [_display_file(code.co_filename), line, code.co_name]
    _last[name] = site
    _codes[name] = code
    try:
        _check_count(node, name, out, site)
    except Exception:  # noqa: BLE001
        _internal_error("backward contract")
    return out


def _check_count(node, name, out, site):
    needs = getattr(node, "needs_input_grad", None)
    if needs is None:
        return
    expected = len(needs)
    grads = out if isinstance(out, tuple) else (out,)
    got = len(grads)
    # torch accepts extra trailing gradients when all of them are None
    if got == expected or (got > expected and all(g is None for g in grads[expected:])):
        return
    _reported.add(name)
    cls = getattr(node, "_forward_cls", None)
    bw = _state.cur_bw[1] if _state.cur_bw else None
    fname = getattr(cls, "__name__", name)
    _finding(("error", "GW307", tuple(site)), code="GW307", kind="custom-function-contract", severity="error",
             site=site, backward_site=bw, sites=[],
             error="function %s returned an incorrect number of gradients (expected %d, got %d)" % (name, expected, got),
             message="`%s.backward` returns %d gradient(s) but `forward` takes %d input(s): autograd raises "
                     "\"function %s returned an incorrect number of gradients (expected %d, got %d)\"" % (
                         fname, got, expected, name, expected, got))


def site_of_message(msg):
    """For torch's message about a custom backward's outputs: ``(site of the return that
    produced them, already reported, related sites)``, or None when the message names no Function
    of the user's that ran here. A gradient of the wrong shape at index i that the return names as
    a local variable: where that variable was last assigned is a related site (the line the fix may
    change instead of the return)."""
    m = _NAMED.search(msg or "")
    if m is None:
        return None
    site = _last.get(m.group(1))
    if site is None:
        return None
    sites = []
    index = _INDEX.search(msg)
    code = _codes.get(m.group(1))
    if index is not None and code is not None:
        made = _element_line(code, site[1], int(index.group(1)))
        if made is not None and made != site[1]:
            sites.append({"kind": "created", "site": [site[0], made, site[2]],
                          "message": "the gradient at index %s is computed here" % index.group(1)})
    return site, (m.group(2).startswith("incorrect") and m.group(1) in _reported), sites


def _element_line(code, ret_line, index):
    """The line that last assigned the local variable the ``return`` at ``ret_line`` gives at
    position ``index`` (``return grad_x, grad_weight, ...``), or None."""
    import ast
    import linecache

    text = linecache.getline(code.co_filename, ret_line).strip()
    try:
        stmt = ast.parse(text).body[0]
    except (SyntaxError, IndexError):
        return None
    value = getattr(stmt, "value", None) if isinstance(stmt, ast.Return) else None
    elts = value.elts if isinstance(value, ast.Tuple) else [value] if value is not None else []
    if index >= len(elts) or not isinstance(elts[index], ast.Name):
        return None
    name, best = elts[index].id, None
    try:
        for line, ins in _lined_instructions(code):
            if ins.opname in ("STORE_FAST", "STORE_DEREF", "STORE_NAME") and ins.argval == name and line <= ret_line:
                best = line
    except Exception:  # noqa: BLE001
        return None
    return best


_SAVE_TYPE = "save_for_backward can only save variables"


def raised_in_apply(cls, exc, call_frame):
    """``Function.apply`` of the user's ``cls`` raised ``exc``: a non-tensor given to
    ``ctx.save_for_backward`` is reported at that call (GW738)."""
    try:
        msg = str(exc)
        if _SAVE_TYPE not in msg:
            return
        site = _save_line(cls)
        if site is None:
            return
        call = _site(_user_frame(call_frame))
        sites = [{"kind": "call", "site": call, "message": "%s.apply runs it here" % cls.__name__}] if call else []
        first = msg.strip().splitlines()[0]
        _finding(("error", "GW738", tuple(site)), code="GW738", kind="custom-function-contract", severity="error",
                 site=site, sites=sites, error=first,
                 message="`%s.forward` gives `ctx.save_for_backward` a value that is not a tensor: %s" % (
                     cls.__name__, first))
        _mark(exc)
    except Exception:  # noqa: BLE001
        _internal_error("save_for_backward")


def _save_line(cls):
    for meth in ("forward", "setup_context"):
        fn = getattr(cls, meth, None)
        code = getattr(getattr(fn, "__func__", fn), "__code__", None)
        if code is None or not _is_user(code.co_filename):
            continue
        try:
            for line, ins in _lined_instructions(code):
                if ins.argval == "save_for_backward" and ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                    return [_display_file(code.co_filename), line, code.co_name]
        except Exception:  # noqa: BLE001
            continue
    return None
