"""A custom Function's backward whose gradients, as their own names say, do not line up with
forward's inputs (GW723).

``backward`` must return the gradient of forward's i-th input at position i. Code that names its
gradients after the inputs (``grad_gamma``, ``g_time_first``, ``d_x``, ``x_grad``) says which
input each one belongs to; when those names put two of them in each other's place (``return grad_x,
grad_beta, grad_gamma`` for ``forward(ctx, x, gamma, beta)``; a forward whose arguments were
reordered and a backward that was not), or a gradient is computed only under
``ctx.needs_input_grad[k]`` of another input than the one it names, autograd hands each input
another input's gradient (or None). Nothing raises when the shapes agree: the parameters train on
the wrong numbers, or not at all.

Read from the class's code alone, and reported only when every name involved maps to exactly one
input of forward: a gradient named after no input (``grad_in``, ``g``) says nothing.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from gradwarden.engine.diagnostic import Related
from gradwarden.engine.events import Event

_PREFIXES = ("grad_", "g_", "d_", "grad", "d")
_SUFFIXES = ("_grad", "_g")


def _input_named(name: str, inputs: List[str]) -> Optional[str]:
    """The input of forward a gradient's name refers to (``grad_gamma`` -> ``gamma``), or None."""
    found = set()
    for p in _PREFIXES:
        if name.startswith(p) and name[len(p):] in inputs:
            found.add(name[len(p):])
    for s in _SUFFIXES:
        if name.endswith(s) and name[:-len(s)] in inputs:
            found.add(name[:-len(s)])
    return found.pop() if len(found) == 1 else None


def check_gradient_order(it: Any, info: Any) -> None:
    fwd, bwd = info.methods.get("forward"), info.methods.get("backward")
    if fwd is None or bwd is None or fwd.args.vararg is not None:
        return
    inputs = [a.arg for a in list(fwd.args.posonlyargs) + list(fwd.args.args)][1:]
    if len(inputs) < 2 or len(set(inputs)) != len(inputs):
        return
    for node in ast.walk(bwd):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            _check_return(it, info, node, inputs)
        elif isinstance(node, ast.If):
            _check_guard(it, info, node, inputs)


def _check_return(it: Any, info: Any, ret: ast.Return, inputs: List[str]) -> None:
    elts = ret.value.elts  # type: ignore[union-attr]
    named: Dict[int, str] = {}
    for i, e in enumerate(elts[:len(inputs)]):
        if isinstance(e, ast.Name):
            target = _input_named(e.id, inputs)
            if target is not None:
                named[i] = target
    wrong = [(i, t) for i, t in named.items() if inputs[i] != t]
    if len(wrong) < 2 or len(set(named.values())) != len(named):
        return  # one stray name, or two gradients named after one input: not a clear swap
    i, t = wrong[0]
    it.emit(Event("gradient_order", it.span_of(ret), {
        "fn": info.name, "what": f"`{elts[i].id}` (the gradient of `{t}`, as its name says) at position {i}, "  # type: ignore[attr-defined]
                                 f"where forward takes `{inputs[i]}`",
        "n": len(wrong)}))


def _check_guard(it: Any, info: Any, node: ast.If, inputs: List[str]) -> None:
    t = node.test
    if not (isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "needs_input_grad"
            and isinstance(t.slice, ast.Constant) and isinstance(t.slice.value, int)):
        return
    k = t.slice.value
    if not 0 <= k < len(inputs):
        return
    assigned = [tg.id for s in node.body if isinstance(s, ast.Assign) for tg in s.targets if isinstance(tg, ast.Name)]
    names = {n: _input_named(n, inputs) for n in assigned}
    if len(names) != 1:
        return
    (grad, target), = names.items()
    if target is None or target == inputs[k]:
        return
    rets = [r for r in ast.walk(info.methods["backward"]) if isinstance(r, ast.Return) and r.value is not None]
    related = tuple(Related(it.span_of(r), f"`{target}`'s gradient is returned here (None unless "
                                           f"`{inputs[k]}` requires grad)", "note") for r in rets[:1])
    it.emit(Event("gradient_order", it.span_of(node), {
        "fn": info.name, "what": f"`{grad}` (the gradient of `{target}`) is computed only when "
                                 f"`ctx.needs_input_grad[{k}]` asks for `{inputs[k]}`'s",
        "n": 1}, related=related))
