"""Gradients the program itself turns into zeros before the step (GW742, GW743).

- ``p.register_hook(lambda g: torch.zeros_like(g))`` on a parameter: a tensor hook's return value
  replaces the gradient, so a hook that returns zeros of what it is given (``zeros_like(g)``,
  ``g * 0``, ``g.mul(0)``, ``g.new_zeros(...)``, ``g.zero_()``) on every path leaves the parameter a
  gradient of zeros at every backward (a debugging hook left in). A hook that scales (``g * 0.1``),
  masks (``g * mask``), or returns nothing (the gradient is kept) is not reported.
- ``clip_grad_value_(params, v)`` / ``clip_grad_norm_(params, v)`` with ``v`` a number the analysis
  knows to be exactly 0 (``clip_value = 0.0`` meant as "no clipping"): clipping to ``[-0, 0]`` (or
  scaling by ``0 / (norm + eps)``) sets every gradient to zero before the step. An unknown value
  (read from the command line) or a call the program guards (``if clip > 0:``) is not reported.

Both decided from the code at the call; reported there (the line the fix removes or changes)."""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple

from gradwarden.engine.events import Event
from gradwarden.engine.state.model import ConstV, RefV, Value

_ZERO_FACTORIES = frozenset({"zeros_like", "new_zeros"})


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and \
        isinstance(node.value, (int, float)) and node.value == 0


def _names(node: ast.expr, arg: str) -> bool:
    return isinstance(node, ast.Name) and node.id == arg


def zero_of(expr: Optional[ast.expr], arg: str) -> bool:
    """``expr`` is a tensor of zeros made from the hook's argument ``arg``."""
    if expr is None:
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return _names(expr.left, arg) and _is_zero(expr.right) or _is_zero(expr.left) and _names(expr.right, arg)
    if not isinstance(expr, ast.Call) or not isinstance(expr.func, (ast.Attribute, ast.Name)):
        return False
    fname = expr.func.attr if isinstance(expr.func, ast.Attribute) else expr.func.id
    on_arg = isinstance(expr.func, ast.Attribute) and _names(expr.func.value, arg)
    if fname == "zeros_like":
        return bool(expr.args) and _names(expr.args[0], arg) or on_arg
    if on_arg and fname in ("new_zeros", "zero_"):
        return True
    if on_arg and fname in ("mul", "mul_") and len(expr.args) == 1:
        return _is_zero(expr.args[0])
    return False


def hook_returns_zero(fn: Value) -> bool:
    """A lambda or a function of the file, of one argument, that returns zeros of it on every return."""
    if not isinstance(fn, RefV) or fn.kind not in ("lambda", "func"):
        return False
    target = fn.target
    if isinstance(target, tuple) and target:
        target = target[0]  # (the def or lambda node, its frame)
    if not isinstance(target, (ast.Lambda, ast.FunctionDef)) or len(target.args.args) != 1:
        return False
    arg = target.args.args[0].arg
    if isinstance(target, ast.Lambda):
        return zero_of(target.body, arg)
    rets = [n for n in ast.walk(target) if isinstance(n, ast.Return)]
    return bool(rets) and all(zero_of(r.value, arg) for r in rets)


def zero_number(v: Optional[Value]) -> bool:
    return isinstance(v, ConstV) and not isinstance(v.value, bool) and isinstance(v.value, (int, float)) \
        and v.value == 0


class ZeroedGradients:
    """Held by the ``optim`` role as ``optim.zeroed``."""

    def __init__(self, it: Any) -> None:
        self.it = it
        self.reported: set = set()

    def at_register_hook(self, name: str, fn: Value, node: ast.AST) -> None:
        """``p.register_hook(fn)`` on a parameter ``p`` (``name``)."""
        if not hook_returns_zero(fn):
            return
        span = self.it.span_of(node)
        if ("hook", span) in self.reported:
            return
        self.reported.add(("hook", span))
        self.it.emit(Event("gradient_hook_returns_zero", span, {"name": name}))

    def at_clip(self, qual: str, args: List[Value], kwargs: Dict[str, Value], node: ast.AST) -> None:
        fname = qual.rsplit(".", 1)[-1]
        key = "clip_value" if fname == "clip_grad_value_" else "max_norm"
        value = args[1] if len(args) > 1 else kwargs.get(key)
        if not zero_number(value):
            return
        span = self.it.span_of(node)
        if ("clip", span) in self.reported:
            return
        self.reported.add(("clip", span))
        self.it.emit(Event("gradient_clipped_to_zero", span, {"clip": fname, "arg": key}))


__all__: Tuple[str, ...] = ("ZeroedGradients", "hook_returns_zero", "zero_of")
