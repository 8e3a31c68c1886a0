"""The facts gradient-flow checks reason with, as small values (no interpreter here).

- ``Cut``: why a tensor certainly does not require grad, and where its gradient path was cut
  (``no_grad``, ``.detach()``, ``.item()`` re-wrapped by ``torch.tensor``, a non-differentiable
  op, an output a custom Function marked non-differentiable (``marked``), a frozen parameter),
  or ``DATA`` when it never required grad (a factory without
  ``requires_grad=True``). A tensor without a Cut is *unknown*: the checks stay silent on it.
  ``sure=False`` marks a cut that something unknown (an argument the analysis cannot see
  into) may have bypassed: findings built on it are information, not errors.
- ``NumberV`` (a value of the abstract state, engine/state/model.py): a Python number, never a
  tensor, so it carries no graph; its ``cut`` is one of these when it holds a tensor's *values*
  (``item``/``tolist``/``float(t)``), i.e. when a gradient path ends there.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Optional, Tuple

from gradwarden.engine.diagnostic import Span

# kinds of cut, most telling first (the one a combination keeps)
KINDS = ("nograd", "detach", "rewrap", "item", "data_attr", "marked", "nondiff", "checkpoint", "frozen", "data")


@dataclass(frozen=True)
class Cut:
    kind: str
    span: Optional[Span] = None
    what: str = ""  # the call that cut it, for messages ("`.detach()`", "`argmax`")
    sure: bool = True
    stack: Tuple[Span, ...] = ()  # the call sites that led to the cut (outermost first)
    region: Optional[Span] = None  # no_grad: the `with` / decorator / set_grad_enabled that disabled grad
    origin: Optional["Cut"] = None  # rewrap: where the value left autograd (`.item()` ...)
    # no_grad: the region is a helper's decorator and the helper cut a graph-carrying argument it
    # was handed (a differentiable transform run under no_grad): the decorator is the fix
    at_region: bool = False
    # the fix goes where the cut is made, in whichever function (a gradient taken without
    # ``create_graph=True``: the call is what changes), not at the call that reached it
    at_cut: bool = False


DATA = Cut("data")


def join_cuts(cuts: Iterable[Optional[Cut]]) -> Optional[Cut]:
    """The cut of a value computed from values with these cuts (all certainly not requiring
    grad): unknown if any is unknown; else the most telling one, unsure if any is."""
    best: Optional[Cut] = None
    sure = True
    for c in cuts:
        if c is None:
            return None
        sure = sure and c.sure
        if best is None or KINDS.index(c.kind) < KINDS.index(best.kind):
            best = c
        elif c.kind == best.kind == "frozen" and c.span is not None and best.span is not None \
                and c.span.row > best.span.row:
            best = c  # of several freezes, the last one is what left nothing to train
    if best is None:
        return DATA
    return best if best.sure == sure else replace(best, sure=sure)


def unsure(c: Optional[Cut]) -> Optional[Cut]:
    return None if c is None else (c if not c.sure else replace(c, sure=False))
